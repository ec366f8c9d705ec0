"""A worker stops at once what is no longer its own: an attempt recorded LOST, every attempt
when it is declared GONE (then it registers again and serves on), and an attempt whose lease
it could not renew, before that lease runs out."""

from __future__ import annotations

import signal
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from etl_craft.enginedb.transitions import lose_attempt, retire_worker
from etl_craft.runtime.identity import is_zombie, process_start
from tests.chaos.harness import rows, scalar
from tests.chaos.proxy import EngineProxy, cut_off
from tests.fixtures.metadata import TESTER, read_one
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.worker.queueing import (
    python_pipeline,
    queue_run,
    start_worker,
    starts,
    status_of,
    stop_worker,
)

pytestmark = pytest.mark.postgres
ONE_SLOT = ("--ingestion-slots", "1", "--warehouse-slots", "1")
# Far beyond these tests: a task process that stops did so because its worker stopped it.
PATIENT = ("--drain-seconds", "300")
STOPPED_WITHIN = 15.0


def alive(pid: int) -> bool:
    return process_start(pid) is not None and not is_zombie(pid)


def lease_expired(project: ProjectOnDisk, attempt_id: int) -> bool:
    return bool(
        scalar(
            project,
            "SELECT LEASE_EXPIRES_AT < etl_craft_now() FROM AUD_TASK_ATTEMPTS "
            "WHERE ATTEMPT_ID = :a",
            a=attempt_id,
        )
    )


def started_task(project: ProjectOnDisk) -> tuple[int, int]:
    """(attempt id, pid) of the one task process started so far, once it started."""
    wait_for(lambda: len(starts(project)) == 1, "the task process to start")
    [found] = starts(project)
    return found


def serves_on(project: ProjectOnDisk, worker_id: str | None = None) -> str:
    """Queue a quick attempt and wait for it to succeed; the id of the worker that ran it."""
    python_pipeline(project, "after", ["quick"])
    attempt_id = queue_run(project, "after", ["quick"])["quick"]
    wait_for(lambda: status_of(project, attempt_id) == "SUCCESS", "the next attempt SUCCESS")
    [(owner,)] = rows(
        project, "SELECT OWNER_ID FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a", a=attempt_id
    )
    return str(owner)


def test_a_worker_stops_at_once_an_attempt_recorded_lost(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    python_pipeline(pg_project, "lost", ["hold"])
    attempt_id = queue_run(pg_project, "lost", ["hold"])["hold"]
    worker, worker_id = start_worker(processes, pg_project, *ONE_SLOT, *PATIENT)
    started, pid = started_task(pg_project)
    assert started == attempt_id
    # Paused past its lease, the worker is recorded LOST by a reconciler on another host (one
    # here would stop the task process itself, a host away it cannot); then it resumes.
    worker.send_signal(signal.SIGSTOP)
    try:
        wait_for(
            lambda: lease_expired(pg_project, attempt_id), "the paused worker's lease to expire"
        )
        with pg_project.engine.transaction(TESTER) as conn:
            lose_attempt(conn, attempt_id, TESTER, message="recorded LOST by the test")
    finally:
        worker.send_signal(signal.SIGCONT)

    wait_for(lambda: not alive(pid), "the worker to stop the LOST attempt", STOPPED_WITHIN)
    assert worker.poll() is None
    lost = read_one(
        pg_project.engine,
        "SELECT STATUS, ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a",
        a=attempt_id,
    )
    assert (lost["status"], lost["error_message"]) == ("LOST", "recorded LOST by the test")
    assert serves_on(pg_project) == worker_id
    assert stop_worker(processes, worker) == 0


def test_a_worker_declared_gone_stops_its_attempts_registers_again_and_serves_on(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    python_pipeline(pg_project, "gone", ["hold"])
    attempt_id = queue_run(pg_project, "gone", ["hold"])["hold"]
    worker, worker_id = start_worker(processes, pg_project, *ONE_SLOT, *PATIENT)
    _, pid = started_task(pg_project)
    with pg_project.engine.transaction(TESTER) as conn:
        retire_worker(conn, worker_id, TESTER)

    wait_for(lambda: not alive(pid), "the GONE worker to stop its attempt", STOPPED_WITHIN)
    wait_for(lambda: status_of(pg_project, attempt_id) != "RUNNING", "the stop to be recorded")
    stopped = read_one(
        pg_project.engine,
        "SELECT STATUS, RETRYABLE, OUTCOME_SOURCE, ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS "
        "WHERE ATTEMPT_ID = :a",
        a=attempt_id,
    )
    assert (stopped["status"], stopped["retryable"], stopped["outcome_source"]) == (
        "FAILED",
        "Y",
        "OWNER",
    )
    assert f"worker {worker_id} was declared GONE" in str(stopped["error_message"])

    def registrations() -> list[tuple[Any, ...]]:
        return rows(
            pg_project,
            "SELECT WORKER_ID, STATUS FROM AUD_WORKERS WHERE PID = :p ORDER BY STARTED_AT",
            p=worker.pid,
        )

    # It records what it stopped, then registers again: the second row comes a moment later.
    wait_for(lambda: len(registrations()) > 1, "the worker to register again")
    registered = registrations()
    assert len(registered) == 2
    assert registered[0] == (worker_id, "GONE")
    again = str(registered[1][0])
    assert again != worker_id
    assert registered[1][1] == "ACTIVE"
    assert serves_on(pg_project) == again
    assert stop_worker(processes, worker) == 0


def test_a_worker_cut_off_from_the_engine_db_stops_its_attempt_before_the_lease_ends(
    proxied_project: ProjectOnDisk, engine_proxy: EngineProxy, processes: Processes
) -> None:
    lease = 8
    settings = {"lease_seconds": str(lease)}
    python_pipeline(proxied_project, "cut", ["hold"])
    attempt_id = queue_run(proxied_project, "cut", ["hold"])["hold"]
    worker, worker_id = start_worker(
        processes, proxied_project, *ONE_SLOT, *PATIENT, settings=settings
    )
    _, pid = started_task(proxied_project)
    with cut_off(engine_proxy):
        wait_for(lambda: not alive(pid), "the cut-off worker to fence its attempt", lease * 2)
        stopped_at = datetime.now(UTC)
        assert worker.poll() is None

    wait_for(lambda: status_of(proxied_project, attempt_id) != "RUNNING", "the record")
    fenced = read_one(
        proxied_project.engine,
        "SELECT STATUS, RETRYABLE, ERROR_MESSAGE, HEARTBEAT_AT FROM AUD_TASK_ATTEMPTS "
        "WHERE ATTEMPT_ID = :a",
        a=attempt_id,
    )
    assert (fenced["status"], fenced["retryable"]) == ("FAILED", "Y")
    assert f"worker {worker_id} could not renew the attempt's lease" in str(fenced["error_message"])
    renewed = fenced["heartbeat_at"]
    assert isinstance(renewed, datetime)
    assert stopped_at < renewed.astimezone(UTC) + timedelta(seconds=lease)
    assert serves_on(proxied_project) == worker_id
    assert stop_worker(processes, worker) == 0
