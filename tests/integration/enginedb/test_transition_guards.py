"""Guards beyond the status column: live attempts, other live runs, leases, due times, creation."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus, RunStatus, SlotKind, TriggerKind
from etl_craft.core.errors import RunStateError, StaleTransitionError
from etl_craft.core.time import utc_now
from etl_craft.enginedb import transitions as tx
from etl_craft.enginedb.connection import EngineDB
from tests.fixtures.metadata import (
    TESTER,
    read_one,
    seed_attempt,
    seed_pipeline,
    seed_run,
    seed_task_run,
)

OWNER = "host:1:0:owner"


def _live_task_run(db: EngineDB) -> tuple[int, int]:
    pipeline = seed_pipeline(db)
    run_id = seed_run(db, pipeline.pipeline_id, RunStatus.IN_PROGRESS.value)
    return run_id, seed_task_run(db, run_id, pipeline.task_ids["extract"], "IN-PROGRESS")


def test_finish_run_refuses_while_an_attempt_runs(engine_db: EngineDB) -> None:
    run_id, task_run_id = _live_task_run(engine_db)
    seed_attempt(engine_db, task_run_id, "RUNNING", owner_id=OWNER, lease_seconds=60)
    with pytest.raises(StaleTransitionError, match="no live attempt"):
        with engine_db.transaction(TESTER) as conn:
            tx.finish_run(conn, run_id, TESTER, status=RunStatus.SUCCESS)


def test_reopen_refuses_while_another_run_of_the_pipeline_is_live(engine_db: EngineDB) -> None:
    pipeline = seed_pipeline(engine_db)
    ended = seed_run(engine_db, pipeline.pipeline_id, "FAILED")
    seed_run(engine_db, pipeline.pipeline_id, "IN-PROGRESS")
    with pytest.raises(StaleTransitionError, match="no other live run"):
        with engine_db.transaction(TESTER) as conn:
            tx.reopen_run(conn, ended, TESTER, message="repair")


def test_lose_refuses_a_live_lease(engine_db: EngineDB) -> None:
    _, task_run_id = _live_task_run(engine_db)
    attempt = seed_attempt(engine_db, task_run_id, "RUNNING", owner_id=OWNER, lease_seconds=60)
    with pytest.raises(StaleTransitionError, match="lease expired"):
        with engine_db.transaction(TESTER) as conn:
            tx.lose_attempt(conn, attempt, TESTER, message="lost")
    with engine_db.transaction(TESTER) as conn:
        tx.renew_attempt_lease(conn, attempt, TESTER, owner_id=OWNER, lease_seconds=-1)
        tx.recover_attempt(conn, attempt, TESTER, counts=Counts(rows_written=4), message="ledger")
    row = read_one(
        engine_db,
        "SELECT a.STATUS AS a_status, a.OUTCOME_SOURCE AS source, t.STATUS AS t_status, "
        "t.ROWS_WRITTEN AS rows_written FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
        "ON t.TASK_RUN_ID = a.TASK_RUN_ID WHERE a.ATTEMPT_ID = :id",
        id=attempt,
    )
    assert dict(row) == {
        "a_status": "SUCCESS",
        "source": "LEDGER",
        "t_status": "SUCCESS",
        "rows_written": 4,
    }


def test_claim_waits_for_not_before(engine_db: EngineDB) -> None:
    _, task_run_id = _live_task_run(engine_db)
    with engine_db.transaction(TESTER) as conn:
        queued = tx.queue_attempt(
            conn,
            task_run_id,
            TESTER,
            slot_kind=SlotKind.WAREHOUSE,
            not_before=utc_now() + timedelta(hours=1),
        )
    with pytest.raises(StaleTransitionError, match="due"):
        with engine_db.transaction(TESTER) as conn:
            tx.claim_attempt(conn, queued.attempt_id, TESTER, owner_id=OWNER, lease_seconds=60)


def test_create_run_refuses_a_second_run_with_the_same_key(engine_db: EngineDB) -> None:
    pipeline = seed_pipeline(engine_db)
    arguments = {
        "pipeline_id": pipeline.pipeline_id,
        "run_key": "schedule:2026-01-01T00:00:00+00:00",
        "trigger_kind": TriggerKind.SCHEDULE,
        "run_date": date(2026, 1, 1),
        "actor": TESTER,
    }
    with engine_db.transaction(TESTER) as conn:
        run_id = tx.create_run(conn, **arguments)  # type: ignore[arg-type]
    with pytest.raises(RunStateError, match=rf"run {run_id} \(QUEUED\)"):
        with engine_db.transaction(TESTER) as conn:
            tx.create_run(conn, **arguments)  # type: ignore[arg-type]


def test_an_attempt_life_keeps_its_task_run_summary(engine_db: EngineDB) -> None:
    _, task_run_id = _live_task_run(engine_db)
    with engine_db.transaction(TESTER) as conn:
        first = tx.queue_attempt(conn, task_run_id, TESTER, slot_kind=SlotKind.WAREHOUSE)
        with pytest.raises(StaleTransitionError, match=f"attempt {first.attempt_id} is QUEUED"):
            tx.queue_attempt(conn, task_run_id, TESTER, slot_kind=SlotKind.WAREHOUSE)
    with engine_db.transaction(TESTER) as conn:
        tx.claim_attempt(conn, first.attempt_id, TESTER, owner_id=OWNER, lease_seconds=60)
        tx.start_attempt(
            conn,
            first.attempt_id,
            TESTER,
            owner_id=OWNER,
            host="h",
            pid=7,
            process_start="1",
            log_path="/tmp/x.log",
        )
        outcome = tx.AttemptOutcome(
            AttemptStatus.FAILED, error_message="boom", task_log="tail", exit_code=7
        )
        tx.finish_attempt(conn, first.attempt_id, TESTER, owner_id=OWNER, outcome=outcome)
        second = tx.queue_attempt(conn, task_run_id, TESTER, slot_kind=SlotKind.WAREHOUSE)
    summary = read_one(
        engine_db,
        "SELECT STATUS AS status, ATTEMPT_COUNT AS attempts, LATEST_ATTEMPT_ID AS latest, "
        "ERROR_MESSAGE AS error FROM AUD_TASK_RUN_LOG WHERE TASK_RUN_ID = :id",
        id=task_run_id,
    )
    assert second.attempt_number == 2
    assert dict(summary) == {
        "status": "IN-PROGRESS",
        "attempts": 2,
        "latest": second.attempt_id,
        "error": None,
    }
    ended = read_one(
        engine_db,
        "SELECT STATUS AS status, EXIT_CODE AS exit_code, HOST AS host, PID AS pid "
        "FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :id",
        id=first.attempt_id,
    )
    assert dict(ended) == {"status": "FAILED", "exit_code": 7, "host": "h", "pid": 7}
