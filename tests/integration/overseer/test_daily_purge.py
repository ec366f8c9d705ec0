"""The overseer purges history past its retention once a day, at Retention.daily_at."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from etl_craft.config.sections import build_retention
from etl_craft.core.time import utc_now
from etl_craft.operations.retention.daily import DailyPurge
from etl_craft_overseer.overseer import OVERSEER, Overseer
from etl_craft_overseer.queue_pool import QueuePool
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.retention.history import build_history, count


@pytest.fixture
def project(tmp_path: Path, pg_fresh_url: str) -> Iterator[ProjectOnDisk]:
    made = make_project(tmp_path / "etl-craft", pg_fresh_url)
    yield made
    made.engine.dispose()


def test_a_pass_past_the_daily_time_purges_once_as_the_overseer(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    history = build_history(project.engine, tmp_path / "logs")
    # Midnight has always passed today, so the day's purge is due at the first pass.
    retention = replace(build_retention(None), daily_at=time(0, 0))
    daily = DailyPurge(retention, ZoneInfo("UTC"), tmp_path / "logs")
    settings = project.owner_settings(owner_id="overseer:1:0:o", poll_seconds=60.0)
    overseer = Overseer(project.engine, settings, QueuePool(project.engine), daily_purge=daily)

    overseer.run_pass()
    daily.join(timeout=120)

    assert not count(
        project.engine, "AUD_PIPELINES_RUN_LOG", "PIPELINE_RUN_ID = :r", r=history.expired
    )
    with project.engine.read() as conn:
        actors = execute(conn, "SELECT DISTINCT ACTOR FROM AUD_ACTIONS WHERE COMMAND = 'purge'")
        assert set(actors.scalars()) == {"overseer"}
    assert not daily.start_if_due(project.engine, OVERSEER, utc_now())  # once a day
