"""The leading overseer clones the AUD_ tables on its own schedule, in a thread of its own."""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.operations.cloning.clone import clone_project
from etl_craft.operations.cloning.schedule import ScheduledClone
from etl_craft.warehouse import connect
from etl_craft_overseer.overseer import Overseer
from etl_craft_overseer.queue_pool import QueuePool
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.retention.history import build_history


@pytest.fixture
def project(tmp_path: Path, pg_fresh_url: str) -> Iterator[ProjectOnDisk]:
    made = make_project(tmp_path / "etl-craft", pg_fresh_url)
    yield made
    made.engine.dispose()


def test_a_pass_starts_the_clone_when_its_turn_comes_and_not_again_before(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    history = build_history(project.engine, tmp_path / "logs")
    config = project.root / "craft-connector.yml"
    config.write_text(config.read_text() + "Cloning:\n  every_minutes: 15\n")
    connector = load_connector(config, profile=None, environ={})
    assert connector.cloning is not None
    schedule = ScheduledClone(15 * 60, partial(clone_project, project.engine, connector))
    settings = project.owner_settings(owner_id="overseer:1:0:o", poll_seconds=60.0)
    overseer = Overseer(
        project.engine, settings, QueuePool(project.engine), clone_schedule=schedule
    )

    overseer.run_pass()
    schedule.join(timeout=120)

    assert not schedule.start_if_due(time.monotonic())  # the next turn is 15 minutes on
    with connect(connector.warehouse) as warehouse:
        runs = warehouse.fetch_all(
            "read the mirror", "SELECT pipeline_run_id FROM aud_mirror.aud_pipelines_run_log"
        )
    assert {row[0] for row in runs} == {
        history.expired,
        history.consumed,
        history.intervened,
        history.retained,
    }
