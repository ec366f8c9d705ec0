"""Every (from, to) pair of the run, task-run and attempt state machines, on both dialects."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus, RunStatus, TaskRunStatus
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb import transitions as tx
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.transitions.table import TRANSITIONS, Entity, Transition
from tests.fixtures.metadata import (
    TESTER,
    read_one,
    seed_attempt,
    seed_pipeline,
    seed_run,
    seed_task_run,
)

pytestmark = pytest.mark.integration
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
}
CALLS = {**RUN_CALLS, **TASK_RUN_CALLS, **ATTEMPT_CALLS}
STATUSES = {
    Entity.RUN: [status.value for status in RunStatus],
    Entity.TASK_RUN: [status.value for status in TaskRunStatus],
    Entity.ATTEMPT: [status.value for status in AttemptStatus],
}
UPDATES = [rule for rule in TRANSITIONS if rule.sources]
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
        return seed_run(db, pipeline.pipeline_id, status)
    run_id = seed_run(db, pipeline.pipeline_id, RunStatus.IN_PROGRESS.value)
    task_id = pipeline.task_ids["extract"]
    if entity is Entity.TASK_RUN:
        return seed_task_run(db, run_id, task_id, status)
    summary = AttemptStatus(status).summary.value
    task_run_id = seed_task_run(db, run_id, task_id, summary)
    return seed_attempt(db, task_run_id, status, owner_id=OWNER)


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
        with engine_db.transaction(TESTER) as conn:
            call(conn, row_id, OWNER)
        assert _status_of(engine_db, rule.entity, row_id) in rule.targets
    else:
        with pytest.raises(StaleTransitionError, match=rf"found status {source}\b"):
            with engine_db.transaction(TESTER) as conn:
                call(conn, row_id, OWNER)
        assert _status_of(engine_db, rule.entity, row_id) == source


@pytest.mark.parametrize(
    ("rule", "source"),
    [
        pytest.param(rule, sorted(rule.sources)[0], id=rule.name)
        for rule in TRANSITIONS
        if rule.owner_fenced
    ],
)
def test_a_wrong_owner_is_refused(engine_db: EngineDB, rule: Transition, source: str) -> None:
    row_id = _row_in(engine_db, rule.entity, source)
    with pytest.raises(StaleTransitionError, match="owner host:9:9:intruder"):
        with engine_db.transaction(TESTER) as conn:
            CALLS[rule.name](conn, row_id, "host:9:9:intruder")
    assert _status_of(engine_db, rule.entity, row_id) == source


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
