"""A merge target in a real warehouse: DuckDB with an SQLite Engine DB, PostgreSQL with both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.projects import make_project
from tests.integration.rehash.rehash_site import (
    DEPENDENCY,
    PROJECT_TASKS,
    Site,
    use_postgres_warehouse,
)

# (warehouse, Engine DB): each warehouse and each Engine DB dialect at least once.
SITES = [("duckdb", "sqlite"), ("postgresql", "postgresql")]


@pytest.fixture(params=SITES, ids=["-".join(pair) for pair in SITES])
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    warehouse_kind, engine_kind = request.param
    engine_url = None if engine_kind == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    project = make_project(tmp_path / "etl-craft", engine_url)
    admin_url = ""
    warehouse_name = unique_name("etl_craft_rehash")
    if warehouse_kind == "postgresql":
        admin_url = str(request.getfixturevalue("pg_admin_url"))
        use_postgres_warehouse(project, create_database(admin_url, warehouse_name))
    project.migrate("0001_customers.sql", PROJECT_TASKS + DEPENDENCY)
    made = Site(project, warehouse_kind)
    made.load_source()
    yield made
    project.engine.dispose()
    if admin_url:
        drop_database(admin_url, warehouse_name)
