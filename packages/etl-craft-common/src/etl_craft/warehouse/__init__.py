"""Warehouse dialects, connections and SQL fragments."""

from __future__ import annotations

from etl_craft.config.sections import Warehouse
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Capabilities, Column, Dialect
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.kinds import KINDS, kind_of
from etl_craft.warehouse.parsing import ParsedSelect, parse_select
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from etl_craft.warehouse.substitution import TokenValues, substitute
from etl_craft.warehouse.targets import TargetObject

# sqlglot's names for the warehouses' dialects.
SQL_DIALECTS = {kind.type: kind.sqlglot_name for kind in KINDS.values()}


def connect(warehouse: Warehouse) -> WarehouseConnection:
    """A connection to the configured warehouse, its session pinned to UTC."""
    return kind_of(warehouse).connect(warehouse)


__all__ = [
    "SQL_DIALECTS",
    "Capabilities",
    "Column",
    "Dialect",
    "DuckDBConnection",
    "ParsedSelect",
    "PostgreSQLConnection",
    "TargetObject",
    "TokenValues",
    "WarehouseConnection",
    "connect",
    "parse_select",
    "substitute",
]
