"""Warehouse dialects, connections and SQL fragments.

Its names are imported when first used: a module that needs only a light part of the package
(etl_craft.warehouse.literals for `etl-craft list`) must not pay for sqlglot, psycopg and DuckDB
on every start of the CLI.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from etl_craft.config.sections import Warehouse
    from etl_craft.warehouse.connection import WarehouseConnection
    from etl_craft.warehouse.dialect import Capabilities, Column, Dialect
    from etl_craft.warehouse.duckdb import DuckDBConnection
    from etl_craft.warehouse.parsing import ParsedSelect, parse_select
    from etl_craft.warehouse.postgresql import PostgreSQLConnection
    from etl_craft.warehouse.substitution import TokenValues, substitute
    from etl_craft.warehouse.targets import TargetObject

    SQL_DIALECTS: dict[str, str]

_HOMES = {
    "WarehouseConnection": "etl_craft.warehouse.connection",
    "Capabilities": "etl_craft.warehouse.dialect",
    "Column": "etl_craft.warehouse.dialect",
    "Dialect": "etl_craft.warehouse.dialect",
    "DuckDBConnection": "etl_craft.warehouse.duckdb",
    "ParsedSelect": "etl_craft.warehouse.parsing",
    "parse_select": "etl_craft.warehouse.parsing",
    "PostgreSQLConnection": "etl_craft.warehouse.postgresql",
    "TokenValues": "etl_craft.warehouse.substitution",
    "substitute": "etl_craft.warehouse.substitution",
    "TargetObject": "etl_craft.warehouse.targets",
}


def __getattr__(name: str) -> Any:
    if name == "SQL_DIALECTS":
        from etl_craft.warehouse.kinds import KINDS  # noqa: PLC0415

        # sqlglot's names for the warehouses' dialects.
        value: Any = {kind.type: kind.sqlglot_name for kind in KINDS.values()}
    elif name in _HOMES:
        value = getattr(import_module(_HOMES[name]), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def connect(warehouse: Warehouse) -> WarehouseConnection:
    """A connection to the configured warehouse, its session pinned to UTC."""
    from etl_craft.warehouse.kinds import kind_of  # noqa: PLC0415

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
