"""Warehouse dialects, connections and SQL fragments."""

from __future__ import annotations

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.core.errors import ConfigurationError
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Capabilities, Column, Dialect
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.parsing import ParsedSelect, parse_select
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from etl_craft.warehouse.substitution import TokenValues, substitute
from etl_craft.warehouse.targets import TargetObject

# sqlglot's names for the warehouses' dialects.
SQL_DIALECTS = {WarehouseType.POSTGRESQL: "postgres", WarehouseType.DUCKDB: "duckdb"}


def connect(warehouse: Warehouse) -> WarehouseConnection:
    """A connection to the configured warehouse, its session pinned to UTC."""
    if warehouse.type is WarehouseType.POSTGRESQL and warehouse.url:
        return PostgreSQLConnection(warehouse.url)
    if warehouse.type is WarehouseType.DUCKDB and warehouse.path:
        return DuckDBConnection(warehouse.path)
    raise ConfigurationError(
        f"Warehouse of type {warehouse.type} has neither url nor path; "
        "set url for postgresql or path for duckdb in craft-connector.yml"
    )


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
