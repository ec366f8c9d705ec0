"""A project of SQL tasks over a real warehouse: DuckDB with an SQLite Engine DB, PostgreSQL with
a PostgreSQL Engine DB."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.warehouse_sites import SITE_IDS, SITES, project_on_site
from tests.integration.preview.preview_site import PROJECT_TASKS, SQL_FILES, load_sources
from tests.integration.rehash.rehash_site import Site


@pytest.fixture(params=SITES, ids=SITE_IDS)
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    with project_on_site(request, tmp_path, "etl_craft_preview") as (project, warehouse_kind):
        folder = project.root / "sql_files"
        folder.mkdir()
        for name, text in SQL_FILES.items():
            (folder / name).write_text(text)
        project.migrate("0001_tasks.sql", PROJECT_TASKS)
        made = Site(project, warehouse_kind)
        load_sources(made)
        yield made
