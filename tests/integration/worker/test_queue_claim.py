"""A worker's claim from the PostgreSQL queue, as the worker agent makes it."""

from __future__ import annotations

import pytest

from etl_craft.core.actor import Actor, ActorKind
from etl_craft.core.enums import SlotKind
from etl_craft.enginedb import transitions as tx
from etl_craft.enginedb.connection import EngineDB
from tests.fixtures.metadata import TESTER, read_one, seed_pipeline, seed_run

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
        claimed = tx.claim_next_attempt(
            conn,
            actor,
            pool="default",
            free_kinds=[SlotKind.INGESTION],
            owner_id=owner,
            lease_seconds=lease_seconds,
        )
    assert claimed is not None
    return claimed


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
