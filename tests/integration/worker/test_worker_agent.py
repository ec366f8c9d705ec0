"""The worker agent as a real process: claims, slots, cancellation, draining and time limits.

Tests that only queue work share one worker (and its project) per module, since starting a worker
is most of a test's time; each of them leaves no attempt live. A test that configures, drains or
stops its worker, or needs two, starts its own.
"""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

import pytest

from etl_craft.core.enums import AttemptStatus, SlotKind
from etl_craft.enginedb.transitions import request_cancel
from etl_craft.runtime.identity import ProcessIdentity, alive_here
from tests.chaos.harness import LOADS, rows, scalar
from tests.fixtures.metadata import TESTER, read_one
from tests.fixtures.processes import Processes, scripted_project
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.worker.queueing import (
    migrate,
    python_pipeline,
    queue_run,
    release,
    start_worker,
    starts,
    status_of,
    statuses,
    stop_worker,
)

pytestmark = pytest.mark.postgres
ONE_SLOT = ("--ingestion-slots", "1", "--warehouse-slots", "1")


@dataclass(frozen=True)
class SharedWorker:
    project: ProjectOnDisk
    worker_id: str


@pytest.fixture(scope="module")
def shared(pg_engine_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedWorker]:
    """One worker with one slot of each kind, on a project of the module's own."""
    folder = tmp_path_factory.mktemp("shared-worker")
    project = scripted_project(folder / "etl-craft", pg_engine_url)
    started = Processes(folder)
    try:
        _, worker_id = start_worker(started, project, *ONE_SLOT)
        yield SharedWorker(project, worker_id)
    finally:
        started.stop_all()
        project.engine.dispose()


def attempt_row(project: ProjectOnDisk, attempt_id: int) -> dict[str, object]:
    return dict(
        read_one(
            project.engine,
            "SELECT STATUS, OWNER_ID, OUTCOME_SOURCE, ERROR_MESSAGE, RETRYABLE, HOST, PID, "
            "PROCESS_START, CANCEL_REQUESTED_AT, CANCEL_ACKNOWLEDGED_AT, ENDED_BY_KIND "
            "FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a",
            a=attempt_id,
        )
    )


def worker_row(project: ProjectOnDisk, worker_id: str) -> dict[str, object]:
    return dict(
        read_one(
            project.engine,
            "SELECT STATUS, POOL, INGESTION_SLOTS, WAREHOUSE_SLOTS, STOPPED_AT FROM AUD_WORKERS "
            "WHERE WORKER_ID = :w",
            w=worker_id,
        )
    )


def process_alive(row: dict[str, object]) -> bool:
    identity = ProcessIdentity(str(row["host"]), int(str(row["pid"])), str(row["process_start"]))
    return bool(alive_here(identity))


def wait_status(project: ProjectOnDisk, attempt_id: int, status: str) -> None:
    def reached() -> bool:
        found = attempt_row(project, attempt_id)
        ended = AttemptStatus(str(found["status"])).terminal
        assert found["status"] == status or not ended, f"attempt {attempt_id}: {found}"
        return found["status"] == status

    wait_for(reached, f"attempt {attempt_id} {status}")


def test_a_queued_attempt_is_run_to_success_by_a_worker(shared: SharedWorker) -> None:
    project = shared.project
    python_pipeline(project, "solo", ["quick"])
    attempt_id = queue_run(project, "solo", ["quick"])["quick"]
    wait_status(project, attempt_id, "SUCCESS")
    attempt = attempt_row(project, attempt_id)
    assert (attempt["owner_id"], attempt["outcome_source"]) == (shared.worker_id, "CHILD")
    task_run = dict(
        read_one(
            project.engine,
            "SELECT STATUS, LATEST_ATTEMPT_ID, ATTEMPT_COUNT, ROWS_WRITTEN, "
            "END_DATE IS NOT NULL AS ended FROM AUD_TASK_RUN_LOG WHERE LATEST_ATTEMPT_ID = :a",
            a=attempt_id,
        )
    )
    assert task_run == {
        "status": "SUCCESS",
        "latest_attempt_id": attempt_id,
        "attempt_count": 1,
        "rows_written": 1,
        "ended": True,
    }
    registered = worker_row(project, shared.worker_id)
    assert (registered["status"], registered["stopped_at"]) == ("ACTIVE", None)
    assert (registered["pool"], registered["ingestion_slots"], registered["warehouse_slots"]) == (
        "default",
        1,
        1,
    )


def test_a_worker_claims_only_from_its_pool_by_default_the_projects(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    migrate(pg_project, "pool", "UPDATE CFG_PROJECTS SET DEFAULT_POOL = 'etl';")
    python_pipeline(pg_project, "pooled", ["quick"])
    python_pipeline(pg_project, "elsewhere", ["quick_too"])
    # Queued first: a worker that ignored its pool would take this one first.
    other = queue_run(pg_project, "elsewhere", ["quick_too"])["quick_too"]
    mine = queue_run(pg_project, "pooled", ["quick"], pool="etl")["quick"]
    worker, worker_id = start_worker(processes, pg_project, *ONE_SLOT)
    wait_status(pg_project, mine, "SUCCESS")
    assert worker_row(pg_project, worker_id)["pool"] == "etl"
    assert stop_worker(processes, worker) == 0
    assert status_of(pg_project, other) == "QUEUED"


def test_two_workers_claim_each_attempt_exactly_once(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    tasks = [f"hold{n}" for n in range(6)]
    python_pipeline(pg_project, "many", tasks)
    queued = queue_run(pg_project, "many", tasks)
    slots = ("--ingestion-slots", "2", "--warehouse-slots", "1")
    first, first_id = start_worker(processes, pg_project, *slots)
    second, second_id = start_worker(processes, pg_project, *slots)
    wait_for(lambda: statuses(pg_project).get("RUNNING") == 4, "four attempts running")
    # Each worker is full: two running attempts each, two attempts still queued.
    owners = rows(
        pg_project,
        "SELECT OWNER_ID, count(*) FROM AUD_TASK_ATTEMPTS WHERE STATUS = 'RUNNING' GROUP BY 1",
    )
    assert sorted(owners) == sorted([(first_id, 2), (second_id, 2)])
    assert statuses(pg_project) == {"RUNNING": 4, "QUEUED": 2}
    release(pg_project)
    wait_for(lambda: statuses(pg_project) == {"SUCCESS": 6}, "every attempt SUCCESS")
    per_task_run = rows(
        pg_project, "SELECT TASK_RUN_ID, count(*) FROM AUD_TASK_ATTEMPTS GROUP BY TASK_RUN_ID"
    )
    assert [count for _, count in per_task_run] == [1] * 6
    started = starts(pg_project)
    assert Counter(attempt for attempt, _ in started) == Counter(queued.values())
    recorded = rows(pg_project, "SELECT ATTEMPT_ID, PID, OWNER_ID FROM AUD_TASK_ATTEMPTS")
    assert sorted(started) == sorted((attempt, pid) for attempt, pid, _ in recorded)
    assert {owner for _, _, owner in recorded} == {first_id, second_id}
    assert stop_worker(processes, first) == 0
    assert stop_worker(processes, second) == 0


def test_a_worker_runs_no_more_attempts_of_a_kind_than_its_slots(shared: SharedWorker) -> None:
    pg_project = shared.project
    tasks = ["a", "b", "c"]
    python_pipeline(pg_project, "narrow", tasks)
    migrate(pg_project, "loads", LOADS)
    queue_run(pg_project, "narrow", tasks)
    setup = queue_run(pg_project, "loads", ["setup"])["setup"]
    live: list[int] = []

    def ingestion_live() -> int:
        count = int(
            scalar(
                pg_project,
                "SELECT count(*) FROM AUD_TASK_ATTEMPTS WHERE SLOT_KIND = :k "
                "AND STATUS IN ('CLAIMED', 'RUNNING')",
                k=SlotKind.INGESTION.value,
            )
        )
        live.append(count)
        return count

    # The warehouse slot is free while the ingestion slot is taken: the SQL task runs meanwhile.
    wait_for(
        lambda: (
            ingestion_live() == 1
            and statuses(pg_project, "narrow").get("RUNNING") == 1
            and status_of(pg_project, setup) == "SUCCESS"
        ),
        "an ingestion attempt RUNNING and the SQL attempt SUCCESS",
    )
    for done in range(1, 4):
        [(running_task,)] = rows(
            pg_project,
            "SELECT k.TASK_CODE FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
            "ON t.TASK_RUN_ID = a.TASK_RUN_ID JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
            "WHERE a.STATUS = 'RUNNING'",
        )
        release(pg_project, running_task)

        def settled(done: int = done) -> bool:
            now = ingestion_live(), statuses(pg_project, "narrow")
            running = now[1].get("RUNNING") == 1
            return now[1].get("SUCCESS", 0) == done and (done == 3 or running)

        wait_for(settled, f"{done} of the PYTHON attempts SUCCESS")
    assert max(live) == 1
    ordered = rows(
        pg_project,
        "SELECT CLAIMED_AT, ENDED_AT FROM AUD_TASK_ATTEMPTS WHERE SLOT_KIND = 'ingestion' "
        "ORDER BY CLAIMED_AT",
    )
    for (_, ended), (claimed, _) in pairwise(ordered):
        assert claimed >= ended


def test_a_cancel_request_reaches_the_worker_that_runs_the_attempt(shared: SharedWorker) -> None:
    pg_project, worker_id = shared.project, shared.worker_id
    python_pipeline(pg_project, "stoppable", ["held_until_cancelled"])
    attempt_id = queue_run(pg_project, "stoppable", ["held_until_cancelled"])[
        "held_until_cancelled"
    ]
    wait_status(pg_project, attempt_id, "RUNNING")
    running = attempt_row(pg_project, attempt_id)
    with pg_project.engine.transaction(TESTER) as conn:
        request_cancel(conn, attempt_id, TESTER)
    wait_status(pg_project, attempt_id, "CANCELLED")
    cancelled = attempt_row(pg_project, attempt_id)
    assert cancelled["cancel_acknowledged_at"] is not None
    assert cancelled["cancel_acknowledged_at"] >= cancelled["cancel_requested_at"]  # type: ignore[operator]
    assert (cancelled["owner_id"], cancelled["outcome_source"]) == (worker_id, "OWNER")
    assert cancelled["ended_by_kind"] == "WORKER"
    assert not process_alive(running)
    [(summary,)] = rows(
        pg_project, "SELECT STATUS FROM AUD_TASK_RUN_LOG WHERE LATEST_ATTEMPT_ID = :a", a=attempt_id
    )
    assert summary == "CANCELLED"


def test_sigterm_drains_the_running_attempt_and_claims_nothing_new(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    python_pipeline(pg_project, "drained", ["first", "second"])
    queued = queue_run(pg_project, "drained", ["first", "second"])
    worker, worker_id = start_worker(processes, pg_project, *ONE_SLOT)
    wait_for(lambda: statuses(pg_project).get("RUNNING") == 1, "one attempt running")
    [(running_id, running_task)] = rows(
        pg_project,
        "SELECT a.ATTEMPT_ID, k.TASK_CODE FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
        "ON t.TASK_RUN_ID = a.TASK_RUN_ID JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE a.STATUS = 'RUNNING'",
    )
    worker.send_signal(signal.SIGTERM)
    wait_for(lambda: worker_row(pg_project, worker_id)["status"] == "DRAINING", "DRAINING")
    release(pg_project, running_task)
    assert processes.finish(worker).code == 0
    [waiting_id] = [attempt for attempt in queued.values() if attempt != running_id]
    assert status_of(pg_project, running_id) == "SUCCESS"
    left = attempt_row(pg_project, waiting_id)
    assert (left["status"], left["owner_id"]) == ("QUEUED", None)
    assert statuses(pg_project) == {"SUCCESS": 1, "QUEUED": 1}
    gone = worker_row(pg_project, worker_id)
    assert gone["status"] == "GONE"
    assert gone["stopped_at"] is not None


def test_a_drain_that_runs_out_of_time_stops_the_attempt_failed_retryable(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    python_pipeline(pg_project, "stuck", ["hold"])
    attempt_id = queue_run(pg_project, "stuck", ["hold"])["hold"]
    worker, worker_id = start_worker(processes, pg_project, *ONE_SLOT, "--drain-seconds", "1")
    wait_status(pg_project, attempt_id, "RUNNING")
    running = attempt_row(pg_project, attempt_id)
    assert stop_worker(processes, worker) == 0
    stopped = attempt_row(pg_project, attempt_id)
    assert (stopped["status"], stopped["retryable"], stopped["outcome_source"]) == (
        "FAILED",
        "Y",
        "OWNER",
    )
    assert f"worker {worker_id} drained" in str(stopped["error_message"])
    assert not process_alive(running)
    assert worker_row(pg_project, worker_id)["status"] == "GONE"


def test_an_attempt_over_its_time_limit_is_timed_out_by_the_worker(shared: SharedWorker) -> None:
    pg_project = shared.project
    python_pipeline(pg_project, "slow", ["held_past_its_limit"], timeout_seconds=1)
    attempt_id = queue_run(pg_project, "slow", ["held_past_its_limit"])["held_past_its_limit"]
    wait_status(pg_project, attempt_id, "RUNNING")
    running = attempt_row(pg_project, attempt_id)
    wait_status(pg_project, attempt_id, "TIMED_OUT")
    assert "TASK_TIMEOUT_SECONDS=1" in str(attempt_row(pg_project, attempt_id)["error_message"])
    assert not process_alive(running)
