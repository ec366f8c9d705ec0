"""A real run history on each Engine DB dialect, and each real warehouse to mirror it into."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.warehouse.connection import WarehouseConnection
from tests.fixtures.run_history import RunHistory, run_history
from tests.fixtures.warehouse_sites import scratch_warehouse

TEST_SETTINGS = ("ETL_CRAFT_TEST_DATABASE_URL", "ETL_CRAFT_REQUIRE_POSTGRES")


@pytest.fixture(params=("sqlite", "postgresql"))
def history(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunHistory]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    with pytest.MonkeyPatch.context() as env:
        # The project's settings only; the test database settings stay for the warehouse.
        for key in [key for key in os.environ if key.startswith("ETL_CRAFT_")]:
            if key not in TEST_SETTINGS:
                env.delenv(key)
        env.setenv("ETL_CRAFT_POLL_SECONDS", "0.2")
        made = run_history(tmp_path / "etl-craft", url)
        yield made
        made.ctx.close()
        made.project.engine.dispose()


@pytest.fixture(params=("duckdb", "postgresql"))
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[WarehouseConnection]:
    with scratch_warehouse(request, tmp_path, "mirror") as conn:
        yield conn
