"""Every (from, to) pair of the worker state machine, and of the attempt leases a worker's
heartbeat renews, on PostgreSQL: the only Engine DB with workers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import pytest

from etl_craft.core.enums import AttemptStatus, RunStatus, WorkerStatus
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb import transitions as tx
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.transitions.table import BY_NAME, TRANSITIONS, Entity, Transition
from etl_craft.enginedb.workers import WorkerRegistration
from tests.fixtures.metadata import (
    TESTER,
    execute,
    new_code,
    read_one,
    seed_attempt,
    seed_pipeline,
    seed_run,
    seed_task_run,
)

pytestmark = pytest.mark.postgres
WorkerCall = Callable[[EngineConnection, str], object]
SILENT_SECONDS = 31  # a worker silent this long is GONE at a 10 s heartbeat interval

WORKER_CALLS: dict[str, WorkerCall] = {
    "beat_worker": lambda c, w: tx.beat_worker(c, w, lease_seconds=60),
    "drain_worker": lambda c, w: tx.drain_worker(c, w, TESTER),
    "retire_worker": lambda c, w: tx.retire_worker(c, w, TESTER),
    "mark_silent_workers_gone": lambda c, _w: tx.mark_silent_workers_gone(c, interval_seconds=10),
}
# These answer what they found (the worker's status, the workers they marked) rather than raise.
ANSWERING = {"beat_worker", "mark_silent_workers_gone"}
RENEWAL = BY_NAME["renew_worker_attempt_leases"]
WORKER_PAIRS = [
    pytest.param(BY_NAME[name], status.value, id=f"{name}-from-{status.value}")
    for name in WORKER_CALLS
    for status in WorkerStatus
]


@pytest.fixture(scope="module")
def db(pg_engine_url: str) -> Iterator[EngineDB]:
    engine = EngineDB(pg_engine_url)
    yield engine
    engine.dispose()


def test_every_worker_and_heartbeat_transition_is_walked_here() -> None:
    walked = {
        rule.name
        for rule in TRANSITIONS
        if rule.sources and (rule.entity is Entity.WORKER or rule.bulk)
    }
    assert walked == {*WORKER_CALLS, RENEWAL.name}


def _worker_in(db: EngineDB, status: str) -> str:
    """A registered worker in ``status``, silent for SILENT_SECONDS."""
    worker_id = f"host:{new_code('worker')}:1:ab"
    with db.transaction(TESTER) as conn:
        tx.register_worker(conn, WorkerRegistration(worker_id, "default", "h", 1, "0", 1, 1, 1))
        execute(
            conn,
            "UPDATE AUD_WORKERS SET STATUS = :s, "
            "HEARTBEAT_AT = etl_craft_add_seconds(etl_craft_now(), :silent) WHERE WORKER_ID = :w",
            s=status,
            silent=-SILENT_SECONDS,
            w=worker_id,
        )
    return worker_id


def _worker_row(db: EngineDB, worker_id: str) -> Any:
    return read_one(
        db,
        "SELECT STATUS AS status, HEARTBEAT_AT AS heartbeat_at, STOPPED_AT AS stopped_at "
        "FROM AUD_WORKERS WHERE WORKER_ID = :w",
        w=worker_id,
    )


@pytest.mark.parametrize(("rule", "source"), WORKER_PAIRS)
def test_worker_transition_from_each_status(db: EngineDB, rule: Transition, source: str) -> None:
    worker_id = _worker_in(db, source)
    before = _worker_row(db, worker_id)
    allowed = source in rule.sources
    if allowed or rule.name in ANSWERING:
        with db.transaction(TESTER) as conn:
            WORKER_CALLS[rule.name](conn, worker_id)
    else:
        with pytest.raises(StaleTransitionError, match=rf"found status {source}\b"):
            with db.transaction(TESTER) as conn:
                WORKER_CALLS[rule.name](conn, worker_id)
    after = _worker_row(db, worker_id)
    if allowed:
        assert after.status in rule.targets
        assert after != before
    else:
        assert after == before


def _attempt_owned_in(db: EngineDB, owner: str, status: str) -> int:
    """An attempt of ``owner`` in ``status``, its lease expired a minute ago."""
    pipeline = seed_pipeline(db)
    run_id = seed_run(db, pipeline.pipeline_id, RunStatus.IN_PROGRESS.value)
    summary = AttemptStatus(status).summary.value
    task_run_id = seed_task_run(db, run_id, pipeline.task_ids["extract"], summary)
    attempt_id = seed_attempt(db, task_run_id, "CLAIMED", owner_id=owner)
    with db.transaction(TESTER) as conn:
        execute(
            conn,
            "UPDATE AUD_TASK_ATTEMPTS SET STATUS = :s WHERE ATTEMPT_ID = :a",
            s=status,
            a=attempt_id,
        )
    return attempt_id


def _lease_of(db: EngineDB, attempt_id: int) -> tuple[str, datetime]:
    row = read_one(
        db,
        "SELECT STATUS AS status, LEASE_EXPIRES_AT AS lease FROM AUD_TASK_ATTEMPTS "
        "WHERE ATTEMPT_ID = :a",
        a=attempt_id,
    )
    return str(row.status), row.lease


@pytest.mark.parametrize("source", [status.value for status in AttemptStatus])
def test_a_beat_renews_an_attempt_of_the_worker_from_each_status(db: EngineDB, source: str) -> None:
    worker_id = _worker_in(db, WorkerStatus.ACTIVE.value)
    attempt_id = _attempt_owned_in(db, worker_id, source)
    before = _lease_of(db, attempt_id)
    with db.transaction(TESTER) as conn:
        found = tx.beat_worker(conn, worker_id, lease_seconds=60)
    after = _lease_of(db, attempt_id)
    renewed = [owned.attempt_id for owned in found.attempts]
    assert found.status is WorkerStatus.ACTIVE
    if source in RENEWAL.sources:
        assert renewed == [attempt_id]
        assert after[0] in RENEWAL.targets
        assert after[1] > before[1]
    else:
        assert renewed == []
        assert after == before


def test_a_beat_renews_no_attempt_of_another_owner(db: EngineDB) -> None:
    mine, theirs = _worker_in(db, "ACTIVE"), _worker_in(db, "ACTIVE")
    attempt_id = _attempt_owned_in(db, theirs, "RUNNING")
    before = _lease_of(db, attempt_id)
    with db.transaction(TESTER) as conn:
        assert tx.beat_worker(conn, mine, lease_seconds=60).attempts == ()
    assert _lease_of(db, attempt_id) == before


def test_a_gone_worker_renews_no_lease_and_learns_it_is_gone(db: EngineDB) -> None:
    worker_id = _worker_in(db, "GONE")
    attempt_id = _attempt_owned_in(db, worker_id, "RUNNING")
    before = _lease_of(db, attempt_id)
    with db.transaction(TESTER) as conn:
        found = tx.beat_worker(conn, worker_id, lease_seconds=60)
    assert (found.status, found.attempts) == (WorkerStatus.GONE, ())
    assert _lease_of(db, attempt_id) == before


def test_a_worker_that_beat_meanwhile_is_not_marked_gone(db: EngineDB) -> None:
    worker_id = _worker_in(db, "ACTIVE")
    with db.transaction(TESTER) as conn:
        tx.beat_worker(conn, worker_id, lease_seconds=60)
    with db.transaction(TESTER) as conn:
        assert worker_id not in tx.mark_silent_workers_gone(conn, interval_seconds=10)
    assert _worker_row(db, worker_id).status == "ACTIVE"
