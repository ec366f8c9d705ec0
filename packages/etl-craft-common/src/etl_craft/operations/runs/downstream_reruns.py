"""What etl-craft server does for a queued rerun with downstream once the run ends.

Each stage is one transaction that reopens the run and queues the downstream task runs now
ready (rerun's own selection, ``next_stage``), with RERUN interventions in the requester's name.
A task run with an attempt since the request counts as redone, whether a stage queued it or the
supervisor planned it again (a skip judged again): it is not redone twice. So a server stopped
between two stages carries on after a restart from the tables alone.
"""

from __future__ import annotations

import logging

from etl_craft.core.enums import RunStatus
from etl_craft.core.errors import RunStateError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.downstream_reruns import (
    PendingDownstreamRerun,
    pending_downstream_rerun,
    runs_with_pending_downstream_reruns,
    settle_downstream_reruns,
    task_ids_run_since,
)
from etl_craft.enginedb.runs import read_run
from etl_craft.operations.context import OperationContext
from etl_craft.operations.runs.reruns import next_stage

log = logging.getLogger(__name__)


def carry_on_downstream_reruns(engine: EngineDB) -> list[int]:
    """Queue the next stage of every ended run with a pending rerun with downstream; the runs
    reopened for it (the server then drives them as any live run)."""
    with engine.read() as conn:
        run_ids = runs_with_pending_downstream_reruns(conn)
    return [run_id for run_id in run_ids if _carry_on(engine, run_id)]


def _carry_on(engine: EngineDB, run_id: int) -> bool:
    with engine.read() as conn:
        pending = pending_downstream_rerun(conn, run_id)
        run = read_run(conn, run_id)
    if pending is None or not run.status.terminal:
        return False  # queued again, or carried on, since the list was read
    stage: dict[int, str] | None = {}
    if run.status in (RunStatus.SUCCESS, RunStatus.FAILED):
        stage = _stage(engine, run_id, pending)
    if stage is None:
        return False
    if not stage:
        with engine.transaction(pending.actor) as conn:
            settle_downstream_reruns(conn, run_id)
        log.info("run %s: its rerun with downstream is done (run %s)", run_id, run.status)
        return False
    log.info("run %s: rerunning %s (downstream)", run_id, ", ".join(stage.values()))
    return True


def _stage(engine: EngineDB, run_id: int, pending: PendingDownstreamRerun) -> dict[int, str] | None:
    """The task runs queued (task id -> code), or None when the stage has to wait."""
    ctx = OperationContext(None, None, engine, pending.actor)
    with engine.read() as conn:
        redone = task_ids_run_since(conn, run_id, pending.since_attempt_id)
    try:
        return next_stage(ctx, run_id, pending.task_id, redone, True, pending.reason)
    except RunStateError as refusal:
        # Another run of the pipeline is live: the stage waits until it ends.
        log.info("run %s: the next stage of its rerun with downstream waits: %s", run_id, refusal)
        return None
