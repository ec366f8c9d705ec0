"""A worker refuses to start where the queue can't work or its schema version doesn't match."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.core.errors import ExitCode
from tests.chaos.harness import scalar
from tests.fixtures.metadata import record_newer_schema
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk, make_project


def test_a_worker_refuses_an_sqlite_engine_db(tmp_path: Path, processes: Processes) -> None:
    project = make_project(tmp_path / "etl-craft")
    try:
        done = processes.run(project, "worker")
    finally:
        project.engine.dispose()
    assert done.code == ExitCode.CONFIGURATION, done.output
    assert "needs a PostgreSQL Engine DB" in done.output
    assert "etl-craft run" in done.output


@pytest.mark.postgres
def test_a_worker_refuses_an_engine_db_migrated_by_a_newer_etl_craft(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    newer = record_newer_schema(pg_project.engine)
    done = processes.run(pg_project, "worker")
    assert done.code == ExitCode.MIGRATION, done.output
    assert f"is at schema version {newer}" in done.output
    assert f"built for schema version {newer - 1};" in done.output
    assert "upgrade the worker" in done.output
    assert scalar(pg_project, "SELECT count(*) FROM AUD_WORKERS") == 0


@pytest.mark.postgres
def test_a_heartbeat_outside_the_lease_is_refused(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    done = processes.run(pg_project, "worker", "--heartbeat-seconds", "3")
    assert done.code == ExitCode.USAGE, done.output
    assert "--heartbeat-seconds 3 is not below the lease of 3s" in done.output
    assert scalar(pg_project, "SELECT count(*) FROM AUD_WORKERS") == 0
