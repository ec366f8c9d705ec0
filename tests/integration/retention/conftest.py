"""A fresh Engine DB per test on each dialect (a purge acts on the whole Engine DB), and real
warehouses to archive into."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.enginedb.connection import EngineDB
from etl_craft.warehouse.connection import WarehouseConnection
from tests.fixtures.databases import sqlite_copy
from tests.fixtures.warehouse_sites import scratch_warehouse


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
    with scratch_warehouse(request, tmp_path, "archive") as conn:
        yield conn
