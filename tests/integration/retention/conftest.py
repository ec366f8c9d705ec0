"""A fresh Engine DB per test on each dialect (a purge acts on the whole Engine DB), and real
warehouses to archive into."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.enginedb.connection import EngineDB
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from tests.fixtures.databases import create_database, drop_database, sqlite_copy, unique_name


@pytest.fixture(params=("sqlite", "postgresql"))
def engine(
    request: pytest.FixtureRequest, sqlite_template: Path, tmp_path: Path
) -> Iterator[EngineDB]:
    if request.param == "postgresql":
        url = str(request.getfixturevalue("pg_fresh_url"))
        db = EngineDB(url)
        yield db
        db.dispose()
        return
    with sqlite_copy(sqlite_template, tmp_path) as url:
        db = EngineDB(url)
        yield db
        db.dispose()


@pytest.fixture(params=("duckdb", "postgresql"))
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[WarehouseConnection]:
    if request.param == "duckdb":
        with DuckDBConnection(str(tmp_path / "warehouse.duckdb")) as conn:
            yield conn
        return
    admin = str(request.getfixturevalue("pg_admin_url"))
    name = unique_name("etl_craft_archive")
    url = create_database(admin, name)
    try:
        with PostgreSQLConnection(url) as conn:
            yield conn
    finally:
        drop_database(admin, name)
