"""SCD2 history written by real task runs: DuckDB with an SQLite Engine DB, PostgreSQL with both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.warehouse_sites import SITE_IDS, SITES, project_on_site


@pytest.fixture(params=SITES, ids=SITE_IDS)
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    with project_on_site(request, tmp_path, "etl_craft_history") as (made, _):
        yield made
