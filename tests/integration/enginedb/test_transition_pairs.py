"""Every (from, to) pair of the run, task-run and attempt state machines, on both dialects.

Workers, and the attempt leases a worker's heartbeat renews, exist on PostgreSQL alone: their
pairs are walked in test_worker_transition_pairs.py.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pytest

from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus, RunStatus, TaskRunStatus
from etl_craft.core.errors import StaleTransitionError
from etl_craft.core.time import as_utc
from etl_craft.enginedb import transitions as tx
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.transitions.table import TRANSITIONS, Entity, Transition
from tests.fixtures.metadata import (
    TESTER,
    execute,
    read_one,
    seed_attempt,
    seed_pipeline,
    seed_run,
    seed_task_run,
)

OWNER = "host:1:0:owner"
Call = Callable[[EngineConnection, int, str], None]

SUCCESS = tx.AttemptOutcome(AttemptStatus.SUCCESS, Counts(rows_written=3))

RUN_CALLS: dict[str, Call] = {
    "admit_run": lambda c, i, _o: tx.admit_run(c, i, TESTER),
    "skip_run": lambda c, i, _o: tx.skip_run(c, i, TESTER, message="gate refused"),
    "finish_run": lambda c, i, _o: tx.finish_run(c, i, TESTER, status=RunStatus.SUCCESS),
    "finalize_remote_run": lambda c, i, _o: tx.finalize_remote_run(
        c, i, TESTER, status=RunStatus.SKIPPED, message="the orchestrator ran no task"
    ),
    "cancel_run": lambda c, i, _o: tx.cancel_run(c, i, TESTER, message="stop"),
    "reopen_run": lambda c, i, _o: tx.reopen_run(c, i, TESTER, message="repair"),
    "mark_run": lambda c, i, _o: tx.mark_run(c, i, TESTER, status=RunStatus.FAILED, message="x"),
    "claim_run_lease": lambda c, i, o: tx.claim_run_lease(
        c, i, TESTER, owner_id=o, lease_seconds=60
    ),
    "renew_run_lease": lambda c, i, o: tx.renew_run_lease(
        c, i, TESTER, owner_id=o, lease_seconds=60
    ),
    "release_run_lease": lambda c, i, o: tx.release_run_lease(c, i, TESTER, owner_id=o),
}
TASK_RUN_CALLS: dict[str, Call] = {
    "mark_task_run": lambda c, i, _o: tx.mark_task_run(
        c, i, TESTER, status=TaskRunStatus.SUCCESS, message="done by hand", rows_written=5
    ),
    "reword_skipped_task_run": lambda c, i, _o: tx.reword_skipped_task_run(
        c, i, TESTER, message="skipped because land wrote no rows (HAS_DATA)"
    ),
}
ATTEMPT_CALLS: dict[str, Call] = {
    "claim_attempt": lambda c, i, o: tx.claim_attempt(c, i, TESTER, owner_id=o, lease_seconds=60),
    "start_attempt": lambda c, i, o: tx.start_attempt(
        c, i, TESTER, owner_id=o, host="h", pid=1, process_start="0", log_path=None
    ),
    "finish_attempt": lambda c, i, o: tx.finish_attempt(c, i, TESTER, owner_id=o, outcome=SUCCESS),
    "time_out_attempt": lambda c, i, o: tx.time_out_attempt(
        c, i, TESTER, owner_id=o, error_message="took longer than 5 s"
    ),
    "cancel_queued_attempt": lambda c, i, _o: tx.cancel_queued_attempt(c, i, TESTER, message="x"),
    "cancel_owned_attempt": lambda c, i, o: tx.cancel_owned_attempt(
        c, i, TESTER, owner_id=o, message="cancelled"
    ),
    "lose_attempt": lambda c, i, _o: tx.lose_attempt(c, i, TESTER, message="lease expired"),
    "recover_attempt": lambda c, i, _o: tx.recover_attempt(
        c, i, TESTER, counts=Counts(rows_written=2), message="from the ledger"
    ),
    "renew_attempt_lease": lambda c, i, o: tx.renew_attempt_lease(
        c, i, TESTER, owner_id=o, lease_seconds=60
    ),
}
CALLS = {**RUN_CALLS, **TASK_RUN_CALLS, **ATTEMPT_CALLS}
STATUSES = {
    Entity.RUN: [status.value for status in RunStatus],
    Entity.TASK_RUN: [status.value for status in TaskRunStatus],
    Entity.ATTEMPT: [status.value for status in AttemptStatus],
}
UPDATES = [
    rule
    for rule in TRANSITIONS
    if rule.sources and rule.entity is not Entity.WORKER and not rule.bulk
]
PAIRS = [
    pytest.param(rule, status, id=f"{rule.name}-from-{status}")
    for rule in UPDATES
    for status in STATUSES[rule.entity]
]


def test_every_update_transition_has_a_call() -> None:
    assert {rule.name for rule in UPDATES} == set(CALLS)


def _row_in(db: EngineDB, entity: Entity, status: str) -> int:
    """A fresh row of ``entity`` in ``status``, alone in its own pipeline."""
    pipeline = seed_pipeline(db)
    if entity is Entity.RUN:
        return _owned(db, seed_run(db, pipeline.pipeline_id, status))
    run_id = seed_run(db, pipeline.pipeline_id, RunStatus.IN_PROGRESS.value)
    task_id = pipeline.task_ids["extract"]
    if entity is Entity.TASK_RUN:
        return seed_task_run(db, run_id, task_id, status)
    summary = AttemptStatus(status).summary.value
    task_run_id = seed_task_run(db, run_id, task_id, summary)
    return seed_attempt(db, task_run_id, status, owner_id=OWNER)


def _owned(db: EngineDB, run_id: int) -> int:
    """The run supervised by OWNER, its lease running, as a live run's supervisor leaves it."""
    with db.transaction(TESTER) as conn:
        execute(
            conn,
            "UPDATE AUD_PIPELINES_RUN_LOG SET OWNER_ID = :o, "
            "LEASE_EXPIRES_AT = etl_craft_add_seconds(etl_craft_now(), 5) "
            "WHERE PIPELINE_RUN_ID = :i",
            o=OWNER,
            i=run_id,
        )
    return run_id


def _fence_of(db: EngineDB, entity: Entity, row_id: int) -> tuple[str | None, datetime | None]:
    table, key = (
        ("AUD_PIPELINES_RUN_LOG", "PIPELINE_RUN_ID")
        if entity is Entity.RUN
        else ("AUD_TASK_ATTEMPTS", "ATTEMPT_ID")
    )
    row = read_one(
        db,
        f"SELECT OWNER_ID AS owner_id, LEASE_EXPIRES_AT AS lease FROM {table} WHERE {key} = :id",
        id=row_id,
    )
    return row["owner_id"], as_utc(row["lease"])


def _status_of(db: EngineDB, entity: Entity, row_id: int) -> str:
    table, key = {
        Entity.RUN: ("AUD_PIPELINES_RUN_LOG", "PIPELINE_RUN_ID"),
        Entity.TASK_RUN: ("AUD_TASK_RUN_LOG", "TASK_RUN_ID"),
        Entity.ATTEMPT: ("AUD_TASK_ATTEMPTS", "ATTEMPT_ID"),
    }[entity]
    row = read_one(db, f"SELECT STATUS AS status FROM {table} WHERE {key} = :id", id=row_id)
    return str(row["status"])


@pytest.mark.parametrize(("rule", "source"), PAIRS)
def test_transition_from_each_status(engine_db: EngineDB, rule: Transition, source: str) -> None:
    row_id = _row_in(engine_db, rule.entity, source)
    call = CALLS[rule.name]
    if source in rule.sources:
        fence = _fence_of(engine_db, rule.entity, row_id) if "lease" in rule.name else None
        with engine_db.transaction(TESTER) as conn:
            call(conn, row_id, OWNER)
        assert _status_of(engine_db, rule.entity, row_id) in rule.targets
        if fence is not None:
            _assert_fenced(rule, fence, _fence_of(engine_db, rule.entity, row_id))
    else:
        with pytest.raises(StaleTransitionError, match=rf"found status {source}\b"):
            with engine_db.transaction(TESTER) as conn:
                call(conn, row_id, OWNER)
        assert _status_of(engine_db, rule.entity, row_id) == source


@pytest.mark.parametrize(
    ("rule", "source"),
    [
        pytest.param(rule, sorted(rule.sources)[0], id=rule.name)
        for rule in UPDATES
        if rule.owner_fenced
    ],
)
def test_a_wrong_owner_is_refused(engine_db: EngineDB, rule: Transition, source: str) -> None:
    row_id = _row_in(engine_db, rule.entity, source)
    with pytest.raises(StaleTransitionError, match="owner host:9:9:intruder"):
        with engine_db.transaction(TESTER) as conn:
            CALLS[rule.name](conn, row_id, "host:9:9:intruder")
    assert _status_of(engine_db, rule.entity, row_id) == source


def _assert_fenced(
    rule: Transition,
    before: tuple[str | None, datetime | None],
    after: tuple[str | None, datetime | None],
) -> None:
    """A lease written by its transition: extended for the caller, or given up."""
    if rule.name.startswith("release_"):
        assert after == (None, None)
        return
    assert after[0] == OWNER
    assert before[1] is not None
    assert after[1] is not None
    assert after[1] > before[1]


def test_admit_runs_admits_the_queued_runs_with_admit_runs_guard(engine_db: EngineDB) -> None:
    """The set form of admit_run: every QUEUED run at once; a run in any other status is left
    as it is and out of the answer (admit_run would refuse it)."""
    runs = {
        status.value: seed_run(engine_db, seed_pipeline(engine_db).pipeline_id, status.value)
        for status in RunStatus
    }
    other_queued = seed_run(engine_db, seed_pipeline(engine_db).pipeline_id, "QUEUED")
    with engine_db.transaction(TESTER) as conn:
        admitted = tx.admit_runs(conn, [*runs.values(), other_queued], TESTER)
    assert sorted(admitted) == sorted([runs["QUEUED"], other_queued])
    for status, run_id in runs.items():
        expected = "IN-PROGRESS" if status == "QUEUED" else status
        assert _status_of(engine_db, Entity.RUN, run_id) == expected
    assert _status_of(engine_db, Entity.RUN, other_queued) == "IN-PROGRESS"
