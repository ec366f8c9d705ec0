"""Handing a run's due QUEUED attempts to a pool while it has free slots of their kind."""

from __future__ import annotations

from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.runs import RunRow, queued_attempts
from etl_craft.pools.base import AttemptSpec, Pool
from etl_craft.runtime.metrics import DISPATCH_SECONDS
from etl_craft.scheduling.shape import RunShape


def submit_queued(engine: EngineDB, pool: Pool, run: RunRow, shape: RunShape) -> int:
    """Submit what fits; returns how many attempts were submitted."""
    if not pool.submits:
        return 0
    with engine.read() as conn:
        queued = queued_attempts(conn, run.pipeline_run_id)
    now = utc_now()
    submitted = 0
    dispatched = DISPATCH_SECONDS.labels("local")
    for attempt in queued:
        if attempt.not_before is not None and attempt.not_before > now:
            continue
        if pool.capacity().free(attempt.slot_kind) <= 0:
            continue
        settings = shape.tasks[attempt.task_id]
        pool.submit(
            AttemptSpec(
                attempt_id=attempt.attempt_id,
                pipeline_run_id=run.pipeline_run_id,
                pipeline_code=run.pipeline_code,
                task_code=settings.code,
                attempt_number=attempt.attempt_number,
                handler=settings.handler,
                slot_kind=attempt.slot_kind,
                timeout_seconds=settings.timeout_seconds,
            )
        )
        dispatched.observe(max(0.0, (utc_now() - attempt.due_at).total_seconds()))
        submitted += 1
    return submitted
