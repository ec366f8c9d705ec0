"""Warehouses for rule tests: a PostgreSQL database per module and a DuckDB file per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from tests.fixtures.databases import create_database, drop_database, unique_name


@pytest.fixture(scope="module")
def rules_pg_warehouse_url(pg_admin_url: str) -> Iterator[str]:
    name = unique_name("etl_craft_rules_wh")
    url = create_database(pg_admin_url, name)
    yield url
    drop_database(pg_admin_url, name)


@pytest.fixture(params=("postgresql", "duckdb"))
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[WarehouseConnection]:
    conn: WarehouseConnection
    if request.param == "postgresql":
        conn = PostgreSQLConnection(str(request.getfixturevalue("rules_pg_warehouse_url")))
    else:
        conn = DuckDBConnection(str(tmp_path / "warehouse.duckdb"))
    yield conn
    conn.close()


@pytest.fixture
def schema(warehouse: WarehouseConnection) -> str:
    name = unique_name("s")
    warehouse.execute("create the test schema", f"CREATE SCHEMA {name}")
    return name
