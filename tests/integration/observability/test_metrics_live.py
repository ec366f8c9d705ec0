"""/metrics of a live overseer (queue provider) and a live worker while a run goes through."""

from __future__ import annotations

import signal

import pytest

from tests.chaos.harness import rows
from tests.fixtures.processes import Processes, free_port
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.observability.scraping import Scrape, serving, until
from tests.integration.overseer.test_server import run_status
from tests.integration.worker.queueing import (
    migrate,
    python_pipeline,
    release,
    start_worker,
    starts,
)

pytestmark = pytest.mark.postgres

QUEUE = {"pool": "default", "slot_kind": "ingestion"}


def held_pipeline(project: ProjectOnDisk, code: str) -> None:
    """One held PYTHON task, retried: a worker's first claim can outlive the 3-second test
    lease while its fork server still imports on a loaded machine, and is then LOST."""
    python_pipeline(project, code, ["hold"])
    migrate(
        project,
        "retried",
        "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) "
        "SELECT TASK_ID, x.N, x.V FROM CFG_TASKS, (SELECT 'RETRIES' AS N, '3' AS V "
        "UNION ALL SELECT 'RETRY_DELAY_SECONDS', '0') x WHERE TASK_CODE = 'hold';",
    )


def start_server(processes: Processes, project: ProjectOnDisk) -> int:
    port = free_port()
    processes.start(project, "server", "--pool-provider", "queue", "--metrics-port", str(port))
    wait_for(lambda: bool(rows(project, "SELECT 1 FROM AUD_OVERSEERS")), "the server to lead")
    return port


def statement_count(scrape: Scrape, statement: str) -> float:
    return scrape.total("etl_craft_enginedb_statement_seconds_count", statement=statement)


def test_the_queue_and_attempt_series_follow_a_run_through_overseer_and_worker(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    held_pipeline(pg_project, "held")
    server = start_server(processes, pg_project)
    before = serving(server)
    assert before.value("etl_craft_queue_depth", **QUEUE) == 0
    assert before.value("etl_craft_runs", project="default", status="IN-PROGRESS") == 0
    assert before.value("etl_craft_overseer_leading") == 1
    assert before.value("etl_craft_enginedb_up") == 1

    run_id = pg_project.queued_run("held")
    queued = until(
        server,
        lambda s: s.value("etl_craft_queue_depth", **QUEUE) == 1,
        "the overseer to admit the run and queue its attempt",
    )
    assert queued.value("etl_craft_runs", project="default", status="IN-PROGRESS") == 1
    assert queued.value("etl_craft_attempts", status="QUEUED", **QUEUE) == 1
    assert queued.total("etl_craft_admission_latency_seconds_count", decision="admitted") == 1
    assert queued.value("etl_craft_workers", pool="default", status="ACTIVE") == 0

    worker_port = free_port()
    start_worker(processes, pg_project, "--metrics-port", str(worker_port))
    wait_for(lambda: len(starts(pg_project)) == 1, "the worker to run the held task")
    worker = serving(worker_port)
    claims = worker.value("etl_craft_worker_claims_total", **QUEUE) or 0
    assert worker.value("etl_craft_worker_attempts_running", **QUEUE) == 1
    assert claims >= 1
    assert worker.value("etl_craft_dispatch_latency_seconds_count", provider="queue") == claims
    assert statement_count(worker, "transition_claim_attempts") >= 1
    running = until(
        server,
        lambda s: s.value("etl_craft_attempts", status="RUNNING", **QUEUE) == 1,
        "the overseer to see the attempt running",
    )
    assert running.value("etl_craft_queue_depth", **QUEUE) == 0
    assert running.value("etl_craft_queue_oldest_age_seconds", **QUEUE) == 0
    assert running.value("etl_craft_workers", pool="default", status="ACTIVE") == 1
    assert running.value("etl_craft_worker_slots", **QUEUE) == 4

    release(pg_project)
    wait_for(lambda: run_status(pg_project, run_id) == "SUCCESS", "the run to succeed")
    after = until(
        server,
        lambda s: s.value("etl_craft_runs_ended_total", project="default", status="SUCCESS") == 1,
        "the overseer to count the run it finished",
    )
    assert after.value("etl_craft_attempts", status="RUNNING", **QUEUE) == 0
    assert after.value("etl_craft_runs", project="default", status="IN-PROGRESS") == 0
    assert statement_count(after, "overseer_runs") > statement_count(before, "overseer_runs")
    done = until(
        worker_port,
        lambda s: s.value("etl_craft_worker_attempts_running", **QUEUE) == 0,
        "the worker to settle its attempt",
    )
    assert (
        done.value("etl_craft_worker_attempts_ended_total", pool="default", status="SUCCESS") == 1
    )


def test_a_killed_worker_s_attempt_is_counted_lost_by_the_reconciling_overseer(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    held_pipeline(pg_project, "orphaned")
    server = start_server(processes, pg_project)
    assert serving(server).value("etl_craft_lease_expiries_total", outcome="lost") is None
    worker, _ = start_worker(processes, pg_project, "--metrics-port", "0")
    pg_project.queued_run("orphaned")
    wait_for(lambda: len(starts(pg_project)) == 1, "the worker to run the held task")
    [(killed, _)] = starts(pg_project)
    before = serving(server).value("etl_craft_lease_expiries_total", outcome="lost") or 0

    worker.send_signal(signal.SIGKILL)
    worker.wait()

    lost = until(
        server,
        lambda s: s.value("etl_craft_lease_expiries_total", outcome="lost") == before + 1,
        "the overseer to reconcile the expired lease",
    )
    assert lost.value("etl_craft_attempts", status="RUNNING", **QUEUE) == 0
    status = rows(
        pg_project, "SELECT STATUS FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a", a=killed
    )
    assert status == [("LOST",)]
