"""Worker rows in a PostgreSQL Engine DB: registration, the one-statement beat, and their end.

Every (from, to) pair of their transitions is walked in enginedb/test_worker_transition_pairs.py.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import event

from etl_craft.core.actor import Actor, ActorKind
from etl_craft.core.enums import WorkerStatus
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb import transitions as tx
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.transitions import (
    beat_worker,
    drain_worker,
    mark_silent_workers_gone,
    register_worker,
    retire_worker,
)
from etl_craft.enginedb.workers import WorkerRegistration, live_workers
from tests.fixtures.metadata import TESTER, execute, read_one
from tests.integration.worker.test_queue_claim import claim, queue

pytestmark = pytest.mark.postgres


def worker(name: str, pool: str = "default") -> WorkerRegistration:
    return WorkerRegistration(f"host:{name}:1:ab", pool, "host", 1, "0.1.0", 1, 2, 3)


def actor_of(registration: WorkerRegistration) -> Actor:
    return Actor(registration.worker_id, ActorKind.WORKER)


def register(db: EngineDB, *workers: WorkerRegistration) -> None:
    for one in workers:
        with db.transaction(actor_of(one)) as conn:
            register_worker(conn, one)


def leases(db: EngineDB) -> dict[int, datetime]:
    with db.read() as conn:
        found = execute(conn, "SELECT ATTEMPT_ID, LEASE_EXPIRES_AT FROM AUD_TASK_ATTEMPTS").all()
    return {int(row[0]): row[1] for row in found}


def worker_row(db: EngineDB, registration: WorkerRegistration) -> Any:
    return read_one(
        db,
        "SELECT STATUS, HEARTBEAT_AT, STOPPED_AT FROM AUD_WORKERS WHERE WORKER_ID = :w",
        w=registration.worker_id,
    )


def test_beat_renews_every_lease_of_the_worker_in_one_statement(db: EngineDB) -> None:
    mine, other = worker("mine"), worker("other")
    register(db, mine, other)
    queue(db, 3)
    first, second = claim(db, mine.worker_id), claim(db, mine.worker_id)
    theirs = claim(db, other.worker_id)
    with db.transaction(TESTER) as conn:
        tx.request_cancel(conn, second, TESTER)
    before, beat_before = leases(db), worker_row(db, mine).heartbeat_at
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(str(args[2]))

    with db.transaction(actor_of(mine)) as conn:
        event.listen(db.engine, "before_cursor_execute", count)
        try:
            found = beat_worker(conn, mine.worker_id, lease_seconds=3600)
        finally:
            event.remove(db.engine, "before_cursor_execute", count)
    after = leases(db)
    assert len(statements) == 1
    assert found.status is WorkerStatus.ACTIVE
    assert [owned.attempt_id for owned in found.attempts] == [first, second]
    cancels = {owned.attempt_id: owned.cancel_requested_at for owned in found.attempts}
    assert cancels[first] is None
    assert cancels[second] is not None
    assert after[first] > before[first]
    assert after[second] > before[second]
    assert after[theirs] == before[theirs]
    assert worker_row(db, mine).heartbeat_at > beat_before


def test_beat_of_an_unregistered_worker_finds_no_worker(db: EngineDB) -> None:
    with db.transaction(TESTER) as conn:
        found = beat_worker(conn, "host:404:1:ef", lease_seconds=60)
    assert found.status is None
    assert found.attempts == ()


def test_a_worker_drains_then_is_gone_for_good(db: EngineDB) -> None:
    one = worker("one")
    register(db, one)
    with db.transaction(actor_of(one)) as conn:
        drain_worker(conn, one.worker_id, actor_of(one))
    drained = worker_row(db, one)
    assert (drained.status, drained.stopped_at) == ("DRAINING", None)
    with db.transaction(actor_of(one)) as conn:
        retire_worker(conn, one.worker_id, actor_of(one))
    gone = worker_row(db, one)
    assert gone.status == "GONE"
    assert gone.stopped_at is not None
    with pytest.raises(StaleTransitionError, match="found status GONE"):
        with db.transaction(actor_of(one)) as conn:
            drain_worker(conn, one.worker_id, actor_of(one))
    assert worker_row(db, one).status == "GONE"


def test_workers_silent_for_three_intervals_are_marked_gone(db: EngineDB) -> None:
    silent, recent, beating = worker("silent"), worker("recent"), worker("beating")
    register(db, silent, recent, beating)
    with db.transaction(TESTER) as conn:
        for registration, seconds in ((silent, 31), (recent, 29)):
            execute(
                conn,
                "UPDATE AUD_WORKERS SET HEARTBEAT_AT = etl_craft_add_seconds(etl_craft_now(), :s) "
                "WHERE WORKER_ID = :w",
                s=-seconds,
                w=registration.worker_id,
            )
    with db.transaction(TESTER) as conn:
        assert mark_silent_workers_gone(conn, interval_seconds=10) == [silent.worker_id]
    gone = worker_row(db, silent)
    assert gone.status == "GONE"
    assert gone.stopped_at == gone.heartbeat_at
    assert worker_row(db, recent).status == "ACTIVE"
    assert worker_row(db, beating).status == "ACTIVE"
    with db.transaction(TESTER) as conn:
        assert mark_silent_workers_gone(conn, interval_seconds=10) == []


def test_live_workers_are_those_of_the_pool_not_gone(db: EngineDB) -> None:
    first, second, elsewhere = worker("first"), worker("second"), worker("elsewhere", pool="gpu")
    register(db, first, second, elsewhere)
    with db.transaction(actor_of(second)) as conn:
        retire_worker(conn, second.worker_id, actor_of(second))
    with db.read() as conn:
        live = live_workers(conn, "default")
        gpu = live_workers(conn, "gpu")
    assert [(row.worker_id, row.status) for row in live] == [(first.worker_id, WorkerStatus.ACTIVE)]
    assert live[0].registration == first
    assert [row.worker_id for row in gpu] == [elsewhere.worker_id]
