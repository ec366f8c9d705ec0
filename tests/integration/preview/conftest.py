"""A project of SQL tasks over a real warehouse: DuckDB with an SQLite Engine DB, PostgreSQL with
a PostgreSQL Engine DB."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.projects import make_project
from tests.integration.preview.preview_site import PROJECT_TASKS, SQL_FILES, load_sources
from tests.integration.rehash.rehash_site import Site, use_postgres_warehouse

SITES = [("duckdb", "sqlite"), ("postgresql", "postgresql")]


@pytest.fixture(params=SITES, ids=["-".join(pair) for pair in SITES])
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    warehouse_kind, engine_kind = request.param
    engine_url = None if engine_kind == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    project = make_project(tmp_path / "etl-craft", engine_url)
    admin_url = ""
    warehouse_name = unique_name("etl_craft_preview")
    if warehouse_kind == "postgresql":
        admin_url = str(request.getfixturevalue("pg_admin_url"))
        use_postgres_warehouse(project, create_database(admin_url, warehouse_name))
    folder = project.root / "sql_files"
    folder.mkdir()
    for name, text in SQL_FILES.items():
        (folder / name).write_text(text)
    project.migrate("0001_tasks.sql", PROJECT_TASKS)
    made = Site(project, warehouse_kind)
    load_sources(made)
    yield made
    project.engine.dispose()
    if admin_url:
        drop_database(admin_url, warehouse_name)
