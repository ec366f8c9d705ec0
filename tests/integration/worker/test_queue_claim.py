"""A worker's claim from the PostgreSQL queue, as the worker agent makes it."""

from __future__ import annotations

import pytest

from etl_craft.core.actor import Actor, ActorKind
from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus, SlotKind
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb import transitions as tx
from etl_craft.enginedb.connection import EngineDB
from tests.fixtures.metadata import TESTER, execute, read_one, seed_pipeline, seed_run

pytestmark = pytest.mark.postgres


def queue(db: EngineDB, count: int, pool: str = "default") -> list[int]:
    """``count`` QUEUED attempts of one run, one per task, queued as the overseer would."""
    pipeline = seed_pipeline(db, tasks=tuple(f"t{n}" for n in range(count)), handler="PYTHON")
    run_id = seed_run(db, pipeline.pipeline_id, "IN-PROGRESS")
    queued = []
    with db.transaction(TESTER) as conn:
        for task_id in pipeline.task_ids.values():
            task_run_id = tx.create_task_run(conn, run_id, task_id, TESTER)
            attempt = tx.queue_attempt(
                conn, task_run_id, TESTER, slot_kind=SlotKind.INGESTION, pool=pool
            )
            queued.append(attempt.attempt_id)
    return queued


def claim(db: EngineDB, owner: str, lease_seconds: float = 60) -> int:
    actor = Actor(owner, ActorKind.WORKER)
    with db.transaction(actor) as conn:
        [claimed] = tx.claim_attempts(
            conn,
            actor,
            pool="default",
            free={SlotKind.INGESTION: 1},
            owner_id=owner,
            lease_seconds=lease_seconds,
        )
    return claimed.attempt_id


def test_a_claim_from_the_queue_summarises_the_task_run(db: EngineDB) -> None:
    [attempt_id] = queue(db, 1)
    claim(db, "host:7:1:cd")
    row = read_one(
        db,
        "SELECT t.STATUS, t.LATEST_ATTEMPT_ID, t.ATTEMPT_COUNT, t.UPDATED_BY, t.UPDATED_BY_KIND, "
        "a.STATUS AS attempt_status FROM AUD_TASK_RUN_LOG t "
        "JOIN AUD_TASK_ATTEMPTS a ON a.TASK_RUN_ID = t.TASK_RUN_ID",
    )
    assert dict(row) == {
        "status": "IN-PROGRESS",
        "latest_attempt_id": attempt_id,
        "attempt_count": 1,
        "updated_by": "host:7:1:cd",
        "updated_by_kind": "WORKER",
        "attempt_status": "CLAIMED",
    }


def claim_batch(
    db: EngineDB, actor: Actor, pool: str, free: dict[SlotKind, int], *, summarise: bool = True
) -> list[tx.ClaimedAttempt]:
    """One claim of ``actor`` (a worker, its own owner) for ``free`` slots of ``pool``."""
    with db.transaction(actor) as conn:
        return tx.claim_attempts(
            conn,
            actor,
            pool=pool,
            free=free,
            owner_id=actor.name,
            lease_seconds=60,
            summarise=summarise,
        )


def _queue_kinds(db: EngineDB, pool: str, kinds: list[SlotKind]) -> dict[int, SlotKind]:
    """One QUEUED attempt per kind listed, each of its own task run, in ``pool``."""
    pipeline = seed_pipeline(db, tasks=tuple(f"t{n}" for n in range(len(kinds))), handler="PYTHON")
    run_id = seed_run(db, pipeline.pipeline_id, "IN-PROGRESS")
    queued = {}
    with db.transaction(TESTER) as conn:
        for task_id, kind in zip(pipeline.task_ids.values(), kinds, strict=True):
            task_run_id = tx.create_task_run(conn, run_id, task_id, TESTER)
            attempt = tx.queue_attempt(conn, task_run_id, TESTER, slot_kind=kind, pool=pool)
            queued[attempt.attempt_id] = kind
    return queued


def _statuses(db: EngineDB, attempt_ids: list[int]) -> dict[int, tuple[str, str | None, str]]:
    """Each attempt's status and owner, and its task run's status."""
    with db.read() as conn:
        found = execute(
            conn,
            "SELECT a.ATTEMPT_ID, a.STATUS, a.OWNER_ID, t.STATUS FROM AUD_TASK_ATTEMPTS a "
            "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
            f"WHERE a.ATTEMPT_ID IN ({', '.join(str(a) for a in attempt_ids)})",
        ).all()
    return {int(row[0]): (row[1], row[2], row[3]) for row in found}


def _summarised_by(db: EngineDB, claimed: list[tx.ClaimedAttempt]) -> set[str]:
    """Who last summarised the task runs of ``claimed``."""
    ids = ", ".join(str(attempt.task_run_id) for attempt in claimed)
    with db.read() as conn:
        found = execute(
            conn, f"SELECT UPDATED_BY FROM AUD_TASK_RUN_LOG WHERE TASK_RUN_ID IN ({ids})"
        ).all()
    return {str(row[0]) for row in found}


def test_one_claim_takes_as_many_attempts_of_each_kind_as_slots_are_free(db: EngineDB) -> None:
    ingestion, warehouse = SlotKind.INGESTION, SlotKind.WAREHOUSE
    queued = _queue_kinds(db, "batch", [ingestion] * 3 + [warehouse] * 3)
    owner = "host:9:1:batch"
    actor = Actor(owner, ActorKind.WORKER)
    claimed = claim_batch(db, actor, "batch", {ingestion: 2, warehouse: 1})
    kinds = sorted(attempt.slot_kind.value for attempt in claimed)
    assert kinds == ["ingestion", "ingestion", "warehouse"]
    assert all(queued[attempt.attempt_id] is attempt.slot_kind for attempt in claimed)
    assert all(attempt.waited >= 0 for attempt in claimed)
    found = _statuses(db, list(queued))
    taken = {attempt.attempt_id for attempt in claimed}
    assert {found[a] for a in taken} == {("CLAIMED", owner, "IN-PROGRESS")}
    assert {found[a] for a in set(queued) - taken} == {("QUEUED", None, "IN-PROGRESS")}


def test_claimed_attempts_start_together_or_not_at_all(db: EngineDB) -> None:
    queued = list(_queue_kinds(db, "starts", [SlotKind.INGESTION] * 3))
    owner = "host:9:2:starts"
    actor = Actor(owner, ActorKind.WORKER)
    claimed = claim_batch(db, actor, "starts", {SlotKind.INGESTION: 2}, summarise=False)
    unclaimed = (set(queued) - {attempt.attempt_id for attempt in claimed}).pop()
    assert _summarised_by(db, claimed) == {TESTER.name}

    def start(attempt_id: int, task_run_id: int, pid: int) -> tx.AttemptStart:
        return tx.AttemptStart(attempt_id, task_run_id, owner, "h", pid, "1", None)

    starts = [start(a.attempt_id, a.task_run_id, 100 + n) for n, a in enumerate(claimed)]
    with pytest.raises(StaleTransitionError, match=r"start attempt refused for attempts"):
        with db.transaction(actor) as conn:
            tx.start_attempts(conn, actor, [*starts, start(unclaimed, 0, 999)])
    assert {_statuses(db, queued)[a.attempt_id][0] for a in claimed} == {"CLAIMED"}
    with db.transaction(actor) as conn:
        tx.start_attempts(conn, actor, starts)
    assert _summarised_by(db, claimed) == {owner}
    with db.read() as conn:
        pids = execute(
            conn,
            "SELECT ATTEMPT_ID, PID FROM AUD_TASK_ATTEMPTS WHERE STATUS = 'RUNNING' "
            "AND OWNER_ID = :o",
            o=owner,
        ).all()
    assert {(int(a), int(p)) for a, p in pids} == {(s.attempt_id, s.pid) for s in starts}


def test_outcomes_of_several_attempts_are_recorded_together_or_not_at_all(db: EngineDB) -> None:
    queued = list(_queue_kinds(db, "ends", [SlotKind.INGESTION] * 3))
    owner = "host:9:3:ends"
    actor = Actor(owner, ActorKind.WORKER)
    claimed = claim_batch(db, actor, "ends", {SlotKind.INGESTION: 3})
    first, second, third = sorted(claimed, key=lambda attempt: attempt.attempt_id)
    success = tx.AttemptOutcome(AttemptStatus.SUCCESS, Counts(rows_written=7), exit_code=0)
    failure = tx.AttemptOutcome(AttemptStatus.FAILED, error_message="boom", exit_code=1)
    with db.transaction(actor) as conn:  # the third ended elsewhere first
        tx.finish_attempt(conn, third.attempt_id, actor, owner_id=owner, outcome=failure)
    ends = [
        tx.AttemptEnd(first.attempt_id, first.task_run_id, owner, success),
        tx.AttemptEnd(second.attempt_id, second.task_run_id, owner, failure),
    ]
    with pytest.raises(StaleTransitionError, match=r"finish attempt refused"):
        with db.transaction(actor) as conn:
            tx.finish_attempts(
                conn,
                actor,
                [*ends, tx.AttemptEnd(third.attempt_id, third.task_run_id, owner, success)],
            )
    assert _statuses(db, queued)[first.attempt_id] == ("CLAIMED", owner, "IN-PROGRESS")
    with db.transaction(actor) as conn:
        tx.finish_attempts(conn, actor, ends)
    found = _statuses(db, queued)
    assert found[first.attempt_id] == ("SUCCESS", owner, "SUCCESS")
    assert found[second.attempt_id] == ("FAILED", owner, "FAILED")
    assert found[third.attempt_id] == ("FAILED", owner, "FAILED")
    row = read_one(
        db,
        "SELECT t.ROWS_WRITTEN, a.ROWS_WRITTEN AS attempt_rows, a.EXIT_CODE FROM AUD_TASK_RUN_LOG t "
        "JOIN AUD_TASK_ATTEMPTS a ON a.ATTEMPT_ID = t.LATEST_ATTEMPT_ID WHERE a.ATTEMPT_ID = :a",
        a=first.attempt_id,
    )
    assert dict(row) == {"rows_written": 7, "attempt_rows": 7, "exit_code": 0}
