"""SCD2 history written by real task runs: DuckDB with an SQLite Engine DB, PostgreSQL with both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.rehash.rehash_site import use_postgres_warehouse

SITES = [("duckdb", "sqlite"), ("postgresql", "postgresql")]


@pytest.fixture(params=SITES, ids=["-".join(pair) for pair in SITES])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    warehouse_kind, engine_kind = request.param
    engine_url = None if engine_kind == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", engine_url)
    admin_url, warehouse_name = "", unique_name("etl_craft_history")
    if warehouse_kind == "postgresql":
        admin_url = str(request.getfixturevalue("pg_admin_url"))
        use_postgres_warehouse(made, create_database(admin_url, warehouse_name))
    yield made
    made.engine.dispose()
    if admin_url:
        drop_database(admin_url, warehouse_name)
