"""Wake-ups on PostgreSQL: one NOTIFY per transition, sent at commit, told apart by payload."""

from __future__ import annotations

import pytest

from etl_craft.core.enums import AttemptStatus, RunStatus, SlotKind, TaskRunStatus, WorkerStatus
from etl_craft.enginedb import transitions as tx
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.events import (
    AttemptChanged,
    Listener,
    RunChanged,
    TaskRunChanged,
    WorkerChanged,
    changes_a_plan,
    queued_attempt,
)
from etl_craft.enginedb.workers import WorkerRegistration
from tests.fixtures.metadata import TESTER, seed_pipeline, seed_run, seed_task_run

pytestmark = pytest.mark.postgres
OWNER = "tests:1:1:events"


def _queued_task_run(engine: EngineDB) -> int:
    pipeline = seed_pipeline(engine)
    run_id = seed_run(engine, pipeline.pipeline_id, "IN-PROGRESS")
    return seed_task_run(engine, run_id, pipeline.task_ids["extract"], "IN-PROGRESS")


def test_a_queued_attempt_wakes_workers_and_its_claim_wakes_no_overseer(engine: EngineDB) -> None:
    task_run_id = _queued_task_run(engine)
    with Listener(engine) as listener:
        with engine.transaction(TESTER) as conn:
            queued = tx.queue_attempt(conn, task_run_id, TESTER, slot_kind=SlotKind.INGESTION)
            # Nothing is sent before the commit, so nobody wakes to read what isn't there yet.
            assert not listener.pending()
        listener.wait(5)
        assert listener.drain(queued_attempt) == [
            AttemptChanged(queued.attempt_id, AttemptStatus.QUEUED)
        ]

        with engine.transaction(TESTER) as conn:
            tx.claim_attempt(conn, queued.attempt_id, TESTER, owner_id=OWNER, lease_seconds=60)
        listener.wait(5)
        # The attempt and its task run's summary: two notifications, neither for a worker's
        # claim or an overseer's plan.
        assert listener.pending()
        assert listener.drain(lambda event: queued_attempt(event) or changes_a_plan(event)) == []

        with engine.transaction(TESTER) as conn:
            tx.cancel_owned_attempt(conn, queued.attempt_id, TESTER, owner_id=OWNER, message="x")
        listener.wait(5)
        assert listener.drain(changes_a_plan) == [  # the attempt ended, and its task run
            AttemptChanged(queued.attempt_id, AttemptStatus.CANCELLED),
            TaskRunChanged(task_run_id, TaskRunStatus.CANCELLED),
        ]
        assert not listener.pending()


def test_runs_and_workers_arrive_as_typed_events(engine: EngineDB) -> None:
    pipeline = seed_pipeline(engine)
    run_id = seed_run(engine, pipeline.pipeline_id, "QUEUED")
    worker_id = "tests:2:2:events"
    with Listener(engine) as listener:
        with engine.transaction(TESTER) as conn:
            tx.admit_run(conn, run_id, TESTER)
            tx.register_worker(conn, WorkerRegistration(worker_id, "default", "h", 2, "0", 1, 1, 1))
            tx.retire_worker(conn, worker_id, TESTER)
        listener.wait(5)
        assert listener.drain() == [
            RunChanged(run_id, RunStatus.IN_PROGRESS),
            WorkerChanged(worker_id, WorkerStatus.ACTIVE),
            WorkerChanged(worker_id, WorkerStatus.GONE),
        ]
