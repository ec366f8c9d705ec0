"""Concurrent callers on separate PostgreSQL connections: exactly one wins each race."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from typing import Any, cast

import pytest

from etl_craft.core.enums import SlotKind, TriggerKind
from etl_craft.core.errors import RunStateError
from etl_craft.enginedb import transitions as tx
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.named_statements import statement
from tests.fixtures.metadata import TESTER, execute, seed_pipeline, seed_run, seed_task_run

pytestmark = pytest.mark.postgres
THREADS = 16
ROUNDS = 200


@pytest.fixture(scope="module")
def engines(pg_engine_url: str) -> Iterator[list[EngineDB]]:
    """One engine per thread, so every caller has its own connection."""
    dbs = [EngineDB(pg_engine_url) for _ in range(THREADS)]
    yield dbs
    for db in dbs:
        db.dispose()


def _race(engines: list[EngineDB], attempt: Callable[[EngineDB, int], object]) -> list[object]:
    barrier = threading.Barrier(len(engines), timeout=30)

    def one(index: int) -> object:
        barrier.wait()
        try:
            return attempt(engines[index], index)
        except RunStateError as refused:
            return refused

    with ThreadPoolExecutor(len(engines)) as pool:
        return list(pool.map(one, range(len(engines))))


def test_exactly_one_claim_per_round(engines: list[EngineDB]) -> None:
    db = engines[0]
    pipeline = seed_pipeline(db)
    task_id = pipeline.task_ids["extract"]
    for round_number in range(ROUNDS):
        pool = f"race{round_number}"
        run_id = seed_run(db, pipeline.pipeline_id, "IN-PROGRESS")
        task_run_id = seed_task_run(db, run_id, task_id, "IN-PROGRESS")
        with db.transaction(TESTER) as conn:
            queued = tx.queue_attempt(
                conn, task_run_id, TESTER, slot_kind=SlotKind.WAREHOUSE, pool=pool
            )

        def claim(engine: EngineDB, index: int, pool: str = pool) -> object:
            with engine.transaction(TESTER) as conn:
                found = tx.claim_attempts(
                    conn,
                    TESTER,
                    pool=pool,
                    free={SlotKind.WAREHOUSE: 2},
                    owner_id=f"host:{index}:0:worker",
                    lease_seconds=60,
                )
                return [attempt.attempt_id for attempt in found]

        claims = [got for result in _race(engines, claim) for got in cast(list[int], result)]
        assert claims == [queued.attempt_id], f"round {round_number}: {claims}"
    with db.read() as conn:
        owners = execute(
            conn,
            "SELECT count(*) FROM AUD_TASK_ATTEMPTS WHERE POOL LIKE 'race%' AND STATUS = 'CLAIMED'",
        ).scalar_one()
    assert owners == ROUNDS


def test_exactly_one_run_per_run_key(engines: list[EngineDB]) -> None:
    pipeline = seed_pipeline(engines[0])

    def create(engine: EngineDB, _: int) -> object:
        with engine.transaction(TESTER) as conn:
            return tx.create_run(
                conn,
                pipeline_id=pipeline.pipeline_id,
                run_key="schedule:2026-03-01T00:00:00+00:00",
                trigger_kind=TriggerKind.SCHEDULE,
                run_date=date(2026, 3, 1),
                actor=TESTER,
            )

    results = _race(engines, create)
    created = [result for result in results if isinstance(result, int)]
    refused = [result for result in results if isinstance(result, RunStateError)]
    assert len(created) == 1
    assert len(refused) == THREADS - 1
    with engines[0].read() as conn:
        rows = execute(
            conn,
            "SELECT count(*) FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_ID = :p",
            p=pipeline.pipeline_id,
        ).scalar_one()
    assert rows == 1


def test_the_claim_uses_its_partial_index(engines: list[EngineDB]) -> None:
    db = engines[0]
    pipeline = seed_pipeline(db)
    run_id = seed_run(db, pipeline.pipeline_id, "IN-PROGRESS")
    task_run_id = seed_task_run(db, run_id, pipeline.task_ids["extract"], "SUCCESS")
    with db.transaction(TESTER) as conn:
        # A queue's history: thousands of ended attempts around a handful of queued ones.
        execute(
            conn,
            "INSERT INTO AUD_TASK_ATTEMPTS (TASK_RUN_ID, ATTEMPT_NUMBER, STATUS, POOL, SLOT_KIND, "
            "QUEUED_AT, REQUESTED_BY, REQUESTED_BY_KIND) SELECT :t, n, "
            "CASE WHEN n % 500 = 0 THEN 'QUEUED' ELSE 'SUCCESS' END, 'default', 'warehouse', "
            "now(), 'tester', 'HUMAN' FROM generate_series(1, 5000) AS n "
            "WHERE n % 500 <> 0 OR n = 500",
            t=task_run_id,
        )
        execute(conn, "ANALYZE AUD_TASK_ATTEMPTS")
    # The statement the workers run, as loaded from its named .sql file: a copy here would
    # keep passing after the claim changed.
    claim = statement("postgresql", "transition_claim_attempts")
    with db.transaction(TESTER) as conn:
        [[plan]] = execute(
            conn,
            f"EXPLAIN (FORMAT JSON) {claim.sql}",
            pool="default",
            slot_kind=SlotKind.WAREHOUSE.value,
            limit=4,
            owner_id="explainer:1",
            lease_seconds=60,
        ).all()
    assert "ix_aud_task_attempts_claim" in indexes_used(plan[0]["Plan"])


def indexes_used(node: dict[str, Any]) -> set[str]:
    """The index names anywhere in one EXPLAIN (FORMAT JSON) plan node and its children."""
    found = {node["Index Name"]} if "Index Name" in node else set()
    for child in node.get("Plans", []):
        found |= indexes_used(child)
    return found


def test_transitions_wake_listeners(engines: list[EngineDB], pg_engine_url: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    plain = (
        make_url(pg_engine_url).set(drivername="postgresql").render_as_string(hide_password=False)
    )
    with psycopg.connect(plain, autocommit=True) as listener:
        listener.execute("LISTEN etl_craft_events")
        pipeline = seed_pipeline(engines[0])
        run_id = seed_run(engines[0], pipeline.pipeline_id, "QUEUED")
        with engines[0].transaction(TESTER) as conn:
            tx.admit_run(conn, run_id, TESTER)
        payloads = [note.payload for note in listener.notifies(timeout=5, stop_after=1)]
    assert payloads == [f'{{"type": "run", "id": {run_id}, "status": "IN-PROGRESS"}}']
