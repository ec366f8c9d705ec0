"""Real warehouses: a throwaway PostgreSQL database per test module, a DuckDB file per test, and
Iceberg tables in a SQL catalog (a SQLite file per test, or the module's PostgreSQL database)
with their files in a folder per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.warehouse import connect
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.snowflake import LIVE, Emulator, live_connection

WAREHOUSES = ("postgresql", "duckdb", "iceberg-sqlite", "iceberg-postgresql", "snowflake")


@pytest.fixture(scope="module")
def pg_warehouse_url(pg_admin_url: str) -> Iterator[str]:
    name = unique_name("etl_craft_warehouse")
    url = create_database(pg_admin_url, name)
    yield url
    drop_database(pg_admin_url, name)


# The emulated Snowflake answers a statement in tens of milliseconds, so it runs the contract
# (every action, SCD1 and SCD2, evolution, appends, fencing and the golden SQL) and not every
# module; the live suite (-m cloud) runs the same modules against an account.
SNOWFLAKE_CONTRACT = frozenset(
    {
        "test_actions",
        "test_fence",
        "test_hash_and_evolution",
        "test_concurrency",
        "test_snowflake_golden",
        "test_snowflake_live",
    }
)


@pytest.fixture(params=WAREHOUSES)
def warehouse_kind(request: pytest.FixtureRequest) -> str:
    if request.param == "snowflake" and request.module.__name__.split(".")[-1] not in (
        SNOWFLAKE_CONTRACT
    ):
        pytest.skip(
            "the emulated Snowflake runs the warehouse contract's modules only "
            "(tests/integration/warehouse/conftest.py SNOWFLAKE_CONTRACT), to keep CI short"
        )
    return str(request.param)


@pytest.fixture
def warehouse_location(warehouse_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A PostgreSQL URL, a DuckDB file path, or an Iceberg catalog and its folder (joined by a
    space), for opening more connections to one warehouse."""
    if warehouse_kind == "postgresql":
        return str(request.getfixturevalue("pg_warehouse_url"))
    if warehouse_kind == "iceberg-sqlite":
        return f"{tmp_path / 'catalog.db'} {tmp_path / 'lakehouse'}"
    if warehouse_kind == "iceberg-postgresql":
        return f"{request.getfixturevalue('pg_warehouse_url')} {tmp_path / 'lakehouse'}"
    if warehouse_kind == "snowflake":
        emulator: Emulator = request.getfixturevalue("snowflake_emulator")
        return f"{emulator.host}:{emulator.port}/{emulator.new_database()}"
    return str(tmp_path / "warehouse.duckdb")


def open_warehouse(kind: str, location: str) -> WarehouseConnection:
    if kind == "postgresql":
        return PostgreSQLConnection(location)
    if kind.startswith("iceberg"):
        return connect(iceberg_warehouse(location))
    if kind == "snowflake" and location == LIVE:
        return live_connection()
    if kind == "snowflake":
        address, database = location.split("/")
        host, port = address.split(":")
        return Emulator(host, int(port)).connect(database)
    return DuckDBConnection(location)


def iceberg_warehouse(location: str) -> Warehouse:
    catalog, folder = location.split(" ")
    url, path = (catalog, None) if "://" in catalog else (None, catalog)
    return Warehouse(
        type=WarehouseType.ICEBERG,
        url=url,
        path=path,
        ledger_schema="etl_craft",
        max_queries=None,
        options={"location": folder},
    )


@pytest.fixture
def warehouse(warehouse_kind: str, warehouse_location: str) -> Iterator[WarehouseConnection]:
    conn = open_warehouse(warehouse_kind, warehouse_location)
    yield conn
    conn.close()


@pytest.fixture
def schema(warehouse: WarehouseConnection) -> str:
    """A fresh schema per test, so tests sharing a module database never see each other."""
    name = unique_name("s")
    warehouse.execute("create the test schema", f"CREATE SCHEMA {name}")
    return name
