"""Several attempts per round trip: claimed and started together by a worker, their outcomes
recorded together by their owner when their task processes end at once."""

from __future__ import annotations

import os
import signal
from dataclasses import replace
from pathlib import Path

import pytest

from etl_craft.core.enums import Handler, SlotKind
from etl_craft.core.errors import EngineDBError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.offsets import Offset, OffsetType
from etl_craft.pools.base import AttemptSpec
from etl_craft.pools.local import LocalPool
from etl_craft.runtime.handover import hand_over, outcome_path, take_outcome
from tests.chaos.harness import rows
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.worker.queueing import (
    python_pipeline,
    queue_run,
    release,
    start_worker,
    starts,
)

pytestmark = pytest.mark.postgres
TASKS = ["a", "b", "c"]
UNREACHABLE = "postgresql+psycopg://postgres@127.0.0.1:1/nowhere"  # nothing listens on port 1


def attempts(project: ProjectOnDisk, ids: list[int]) -> list[tuple[object, ...]]:
    return rows(
        project,
        "SELECT a.STATUS, a.CLAIMED_AT, a.ENDED_AT, a.PID, t.STATUS FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        f"WHERE a.ATTEMPT_ID IN ({', '.join(str(i) for i in ids)}) ORDER BY a.ATTEMPT_ID",
    )


def exited(project: ProjectOnDisk, pipeline: str) -> tuple[LocalPool, dict[str, int]]:
    """A local pool holding the attempts of TASKS in a run of ``pipeline``, whose task processes
    handed their outcomes over and exited, none of them settled yet; and the attempts by task."""
    python_pipeline(project, pipeline, TASKS)
    release(project)  # the scripts log their start and return at once
    queued = queue_run(project, pipeline, TASKS)
    slots = {SlotKind.INGESTION: 3, SlotKind.WAREHOUSE: 0}
    pool = LocalPool(project.engine, project.owner_settings(), slots)
    for task, attempt_id in queued.items():
        kind = SlotKind.INGESTION
        pool.submit(AttemptSpec(attempt_id, 0, pipeline, task, 1, Handler.PYTHON, kind, None))
    held = list(pool.attempts.held.values())
    wait_for(
        lambda: all(entry.running.exit_code() is not None for entry in held),
        "the three task processes to exit",
    )
    return pool, queued


def test_a_worker_claims_and_starts_what_its_free_slots_take_in_one_transaction(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    python_pipeline(pg_project, "together", TASKS)
    queued = sorted(queue_run(pg_project, "together", TASKS).values())
    start_worker(processes, pg_project, "--ingestion-slots", "3", "--warehouse-slots", "0")
    wait_for(lambda: len(starts(pg_project)) == 3, "the three attempts to start")

    running = attempts(pg_project, queued)
    assert [row[0] for row in running] == ["RUNNING"] * 3
    # CLAIMED_AT is the claim transaction's clock: one value, one transaction.
    assert len({row[1] for row in running}) == 1
    assert len({row[3] for row in running}) == 3
    assert sorted(attempt for attempt, _ in starts(pg_project)) == queued

    release(pg_project)
    wait_for(
        lambda: [row[0] for row in attempts(pg_project, queued)] == ["SUCCESS"] * 3,
        "the three attempts to succeed",
    )


def test_outcomes_handed_over_together_are_recorded_in_one_transaction(
    pg_project: ProjectOnDisk,
) -> None:
    pool, queued = exited(pg_project, "ends")

    pool.poll()

    ended = attempts(pg_project, sorted(queued.values()))
    assert [(row[0], row[4]) for row in ended] == [("SUCCESS", "SUCCESS")] * 3
    # ENDED_AT is the recording transaction's clock: one value, one transaction.
    assert len({row[2] for row in ended}) == 1
    assert not pool.attempts.held


def test_an_outcome_is_recorded_once_handed_over_and_the_slot_freed_once_the_process_ends(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    python_pipeline(pg_project, "bell", ["quick"])
    python_pipeline(pg_project, "bell_next", ["quick_next"])
    first = queue_run(pg_project, "bell", ["quick"])["quick"]
    second = queue_run(pg_project, "bell_next", ["quick_next"])["quick_next"]
    # One slot; each task process stops (SIGSTOP) just after it handed its outcome over.
    _, worker_id = start_worker(
        processes,
        pg_project,
        "--ingestion-slots",
        "1",
        "--warehouse-slots",
        "0",
        fault="child_after_report:stop",
    )
    wait_for(
        lambda: attempts(pg_project, [first])[0][0] == "SUCCESS",
        "the handed-over outcome to be recorded while its task process is stopped",
    )
    [(pid, continued)] = rows(
        pg_project,
        "SELECT PID, clock_timestamp() FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a",
        a=first,
    )
    assert Path(f"/proc/{pid}").exists()  # stopped, not gone: its slot is still taken
    os.kill(int(pid), signal.SIGCONT)

    wait_for(
        lambda: attempts(pg_project, [second])[0][0] == "SUCCESS",
        "the slot, freed once the first task process ended, to run the next attempt",
    )
    [(owner, claimed)] = rows(
        pg_project,
        "SELECT OWNER_ID, CLAIMED_AT FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a",
        a=second,
    )
    assert owner == worker_id
    assert claimed > continued


def test_outcomes_taken_while_the_engine_db_is_away_wait_for_the_next_try(
    pg_project: ProjectOnDisk,
) -> None:
    pool, queued = exited(pg_project, "away")
    held = list(pool.attempts.held.values())
    # One of them stores an offset with its outcome (an ingestion that resumes from it).
    first = outcome_path(held[0].running.spec.log_path)
    handed = take_outcome(first)
    assert handed is not None
    offset = Offset(OffsetType.INT, 42)
    hand_over(first, replace(handed, offset=offset))
    engine, pool.attempts.engine = pool.attempts.engine, EngineDB(UNREACHABLE)

    with pytest.raises(EngineDBError):
        pool.attempts.settle()

    assert all(outcome_path(entry.running.spec.log_path).exists() for entry in held)
    pool.attempts.engine = engine
    pool.poll()
    ended = attempts(pg_project, sorted(queued.values()))
    assert [(row[0], row[4]) for row in ended] == [("SUCCESS", "SUCCESS")] * 3
    stored = rows(
        pg_project,
        "SELECT OFFSET_TYPE, OFFSET_VALUE FROM AUD_TASK_OFFSETS WHERE ATTEMPT_ID = :a",
        a=held[0].running.attempt_id,
    )
    assert stored == [("INT", offset.encode())]
