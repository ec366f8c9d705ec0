"""The Engine DB unreachable for five seconds mid-run (PostgreSQL): no mixed state, and a
later etl-craft run finishes what the outage interrupted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.chaos.harness import (
    attempts,
    held_pipeline,
    leases_expired,
    live_attempts,
    rows,
    run_statuses,
)
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.fixtures.waiting import wait_for

RUN = ("run", "--pipeline_code", "held", "--run-key", "manual:outage")
OUTAGE_SECONDS = 5.0


@pytest.fixture
def pg_project(pg_fresh_url: str, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    made = make_project(tmp_path / "etl-craft", pg_fresh_url)
    (made.root / "ingestion_scripts").mkdir()
    yield made
    made.engine.dispose()


def test_an_engine_db_outage_mid_run_leaves_nothing_mixed(
    pg_project: ProjectOnDisk,
    pg_admin_url: str,
    pg_fresh_url: str,
    processes: Processes,
    tmp_path: Path,
) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    held_pipeline(pg_project, started, release)
    owner = processes.start(pg_project, *RUN)
    wait_for(started.exists, "the first task to run")
    database = make_url(pg_fresh_url).database
    admin = make_url(pg_admin_url).set(drivername="postgresql").render_as_string(False)
    with psycopg.connect(admin, autocommit=True) as conn:
        try:
            conn.execute(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS false')
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (database,),
            )
            release.write_text("go")  # the task ends and reports while nobody can connect
            time.sleep(OUTAGE_SECONDS)  # the outage itself; nothing is asserted from it
        finally:
            conn.execute(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS true')
    pg_project.engine.dispose()
    first = processes.finish(owner)

    _assert_consistent(pg_project)
    if run_statuses(pg_project) != ["SUCCESS"]:
        wait_for(lambda: leases_expired(pg_project), "the interrupted owner's leases to expire")
        later = processes.run(pg_project, *RUN)
        assert later.code == 0, first.output + later.output
    assert run_statuses(pg_project) == ["SUCCESS"]
    assert attempts(pg_project, "pull")[-1][1] == "SUCCESS"
    assert attempts(pg_project, "after") == [(1, "SUCCESS", "CHILD")]
    assert live_attempts(pg_project) == 0
    _assert_consistent(pg_project)


def _assert_consistent(project: ProjectOnDisk) -> None:
    """A task run's summary agrees with its latest attempt; a live attempt has an owner."""
    found = rows(
        project,
        "SELECT t.STATUS, a.STATUS, a.OWNER_ID FROM AUD_TASK_RUN_LOG t "
        "JOIN AUD_TASK_ATTEMPTS a ON a.ATTEMPT_ID = t.LATEST_ATTEMPT_ID",
    )
    for task_run, attempt, owner in found:
        if attempt in ("CLAIMED", "RUNNING", "QUEUED"):
            assert task_run == "IN-PROGRESS", found
            assert attempt == "QUEUED" or owner is not None, found
        elif attempt == "SUCCESS":
            assert task_run == "SUCCESS", found
    assert run_statuses(project) in (["IN-PROGRESS"], ["SUCCESS"])
