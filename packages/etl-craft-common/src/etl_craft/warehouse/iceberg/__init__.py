"""Apache Iceberg warehouses: tables in an Iceberg SQL catalog, DuckDB as the engine.

Importing this package needs pyiceberg (the ``iceberg`` extra); kinds imports it only when an
Iceberg connection is opened.
"""

from __future__ import annotations

from etl_craft.warehouse.iceberg.catalog import IcebergSettings, settings_of
from etl_craft.warehouse.iceberg.connection import IcebergConnection, IcebergDialect

__all__ = ["IcebergConnection", "IcebergDialect", "IcebergSettings", "settings_of"]
