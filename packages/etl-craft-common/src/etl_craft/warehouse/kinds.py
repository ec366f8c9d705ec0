"""The warehouse types etl-craft writes, as a registry: how to connect, how to check one answers,
and sqlglot's name for its SQL. A new warehouse adds one entry here and its own module.

Drivers other than PostgreSQL's and DuckDB's are optional extras: their modules are imported
only when a connection of that type is opened, and a missing one says which extra to install.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.core.errors import ConfigurationError, WarehouseError
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from etl_craft.warehouse.reach import Reached, reach_duckdb, reach_postgresql
from etl_craft.warehouse.snowflake import SnowflakeConnection, connect_arguments
from etl_craft.warehouse.spark import connect_spark, reach_spark


@dataclass(frozen=True)
class WarehouseKind:
    type: WarehouseType
    sqlglot_name: str  # sqlglot's name for the warehouse's SQL
    connect: Callable[[Warehouse], WarehouseConnection]
    # Whether it answers, asked once within the timeout in seconds (doctor's check).
    reach: Callable[[Warehouse, int], Reached]


def optional_driver(module: str, extra: str, warehouse: WarehouseType) -> ModuleType:
    """Import a warehouse driver that comes with an optional extra, naming the extra if absent."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ConfigurationError(
            f"the {warehouse} warehouse needs the Python package {module.partition('.')[0]}, "
            f"which isn't installed ({error}); install etl-craft-common[{extra}] "
            f"(for example: uv pip install 'etl-craft-common[{extra}]')"
        ) from error


def _connect_postgresql(warehouse: Warehouse) -> WarehouseConnection:
    return PostgreSQLConnection(_required(warehouse, warehouse.url, "url"))


def _connect_duckdb(warehouse: Warehouse) -> WarehouseConnection:
    return DuckDBConnection(_required(warehouse, warehouse.path, "path"))


def _reach_postgresql(warehouse: Warehouse, timeout_seconds: int) -> Reached:
    return reach_postgresql(_required(warehouse, warehouse.url, "url"), timeout_seconds)


def _reach_duckdb(warehouse: Warehouse, timeout_seconds: int) -> Reached:
    return reach_duckdb(_required(warehouse, warehouse.path, "path"))


def _connect_iceberg(warehouse: Warehouse) -> WarehouseConnection:
    optional_driver("pyiceberg", "iceberg", WarehouseType.ICEBERG)
    iceberg = importlib.import_module("etl_craft.warehouse.iceberg")
    connection: WarehouseConnection = iceberg.IcebergConnection(iceberg.settings_of(warehouse))
    return connection


def _reach_iceberg(warehouse: Warehouse, timeout_seconds: int) -> Reached:
    optional_driver("pyiceberg", "iceberg", WarehouseType.ICEBERG)
    reach_module = importlib.import_module("etl_craft.warehouse.iceberg.reach")
    reached: Reached = reach_module.reach_iceberg(warehouse, timeout_seconds)
    return reached


def _connect_snowflake(warehouse: Warehouse) -> WarehouseConnection:
    driver = optional_driver("snowflake.connector", "snowflake", WarehouseType.SNOWFLAKE)
    return SnowflakeConnection(
        driver, connect_arguments(warehouse.options, warehouse.secrets, warehouse.url)
    )


def _reach_snowflake(warehouse: Warehouse, timeout_seconds: int) -> Reached:
    driver = optional_driver("snowflake.connector", "snowflake", WarehouseType.SNOWFLAKE)
    arguments = connect_arguments(warehouse.options, warehouse.secrets, warehouse.url) | {
        "login_timeout": timeout_seconds,
        "network_timeout": timeout_seconds,
    }
    where = f"account {arguments['account']}, database {arguments['database']}"
    try:
        conn = driver.connect(**arguments)
        try:
            cursor = conn.cursor()
            cursor.execute("SELECT CURRENT_VERSION()")
            version = cursor.fetchone()
        finally:
            conn.close()
    except driver.Error as error:
        reason = " ".join(str(error).split())
        raise WarehouseError(
            f"the Snowflake warehouse ({where}) does not answer within {timeout_seconds} s: "
            f"{reason}"
        ) from error
    return Reached(f"Snowflake {version[0] if version else '?'} at {where}")


def _connect_spark(warehouse: Warehouse) -> WarehouseConnection:
    return connect_spark(
        _spark_driver(), *_spark_address(warehouse), warehouse.options.get("scratch_schema")
    )


def _reach_spark(warehouse: Warehouse, timeout_seconds: int) -> Reached:
    return Reached(reach_spark(_spark_driver(), *_spark_address(warehouse)))


def _spark_driver() -> ModuleType:
    return optional_driver("pyspark.sql.connect.session", "spark", WarehouseType.SPARK)


def _spark_address(warehouse: Warehouse) -> tuple[str, str | None]:
    remote = _required(warehouse, warehouse.options.get("remote"), "remote")
    return remote, warehouse.secrets.get("token")


def _required(warehouse: Warehouse, value: str | None, key: str) -> str:
    if value is None:
        raise ConfigurationError(
            f"the {warehouse.type} warehouse has no {key}; set Warehouse.{key} in "
            "craft-connector.yml"
        )
    return value


KINDS: dict[WarehouseType, WarehouseKind] = {
    WarehouseType.POSTGRESQL: WarehouseKind(
        WarehouseType.POSTGRESQL, "postgres", _connect_postgresql, _reach_postgresql
    ),
    WarehouseType.DUCKDB: WarehouseKind(
        WarehouseType.DUCKDB, "duckdb", _connect_duckdb, _reach_duckdb
    ),
    # DuckDB runs every statement on Iceberg tables: their SQL is DuckDB's.
    WarehouseType.ICEBERG: WarehouseKind(
        WarehouseType.ICEBERG, "duckdb", _connect_iceberg, _reach_iceberg
    ),
    WarehouseType.SNOWFLAKE: WarehouseKind(
        WarehouseType.SNOWFLAKE, "snowflake", _connect_snowflake, _reach_snowflake
    ),
    WarehouseType.SPARK: WarehouseKind(WarehouseType.SPARK, "spark", _connect_spark, _reach_spark),
}


def kind_of(warehouse: Warehouse) -> WarehouseKind:
    return KINDS[warehouse.type]


def reach(warehouse: Warehouse, timeout_seconds: int) -> Reached:
    """What answered; WarehouseError naming where it looked and the driver's reason."""
    return kind_of(warehouse).reach(warehouse, timeout_seconds)
