"""A merge target in a real warehouse: DuckDB with an SQLite Engine DB, PostgreSQL with both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.warehouse_sites import SITE_IDS, SITES, project_on_site
from tests.integration.rehash.rehash_site import DEPENDENCY, PROJECT_TASKS, Site


@pytest.fixture(params=SITES, ids=SITE_IDS)
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    with project_on_site(request, tmp_path, "etl_craft_rehash") as (project, warehouse_kind):
        project.migrate("0001_customers.sql", PROJECT_TASKS + DEPENDENCY)
        made = Site(project, warehouse_kind)
        made.load_source()
        yield made
