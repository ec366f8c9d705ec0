"""Remote mode (G5a): an external orchestrator decides, etl-craft executes and records.

The orchestrator's DAG runs `run --init-only` first, then `run --task T` for each task its
trigger rules start, then `run --finalize-only`; every command names the run by the key
`orchestrator:<its run id>`. Nothing here judges a dependency, a run condition or a gate: the
orchestrator already did. What stays etl-craft's is execution: the run each command binds to,
one live run per pipeline, every write, time limits, secrets and the audit of every attempt.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import date

from etl_craft.core.enums import LIVE_ATTEMPT_STATUSES, RunStatus, TaskRunStatus, TriggerKind
from etl_craft.core.errors import RunStateError, UsageError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.gate_records import consume_decisions
from etl_craft.enginedb.metadata import read_project_metadata
from etl_craft.enginedb.runs import RunRow, read_pipeline_shape, read_run, read_task_runs
from etl_craft.enginedb.transitions import (
    admit_run,
    finalize_remote_run,
    reopen_run,
    skip_task_run,
)
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import Acting, perform
from etl_craft.operations.remote.rules import require_remote, require_supported
from etl_craft.operations.runs.forcing import queue_task_attempt
from etl_craft.operations.runs.foreground import (
    RunRequest,
    find_or_create_run,
    reconcile_now,
    supervise_run,
)
from etl_craft.operations.runs.views import RunView, read_run_view
from etl_craft.runtime.stopping import active
from etl_craft.scheduling.gatekeeper import Bypass, Gatekeeper

NOT_RUN = "not run by the orchestrator"
REMOTE_BYPASS = "remote mode: the orchestrator decided this task runs"


@dataclass(frozen=True)
class RemoteRequest:
    pipeline_code: str
    run_key: str | None
    run_date: date | None = None
    task_code: str | None = None

    def run_request(self) -> RunRequest:
        return RunRequest(
            self.pipeline_code,
            run_key=self.run_key,
            run_date=self.run_date,
            trigger_kind=TriggerKind.ORCHESTRATOR,
        )

    def arguments(self, step: str) -> dict[str, object]:
        return {
            "pipeline_code": self.pipeline_code,
            "run_key": self.run_key,
            "run_date": self.run_date.isoformat() if self.run_date else None,
            "task_code": self.task_code,
            step: True,
        }


def _run_key(request: RemoteRequest, option: str) -> str:
    if not request.run_key:
        raise UsageError(
            f"run {option} needs the orchestrator's run: add --run-key orchestrator:<run id> "
            "(generate-yml writes it into every command)"
        )
    return request.run_key


def init_run(ctx: OperationContext, request: RemoteRequest) -> RunView:
    """Create, admit or reopen the run of the orchestrator's run key; judge no gate."""
    require_remote(ctx, "--init-only")
    _run_key(request, "--init-only")
    with ctx.engine.read() as conn:
        metadata = read_project_metadata(conn, ctx.project_code)
    require_supported(metadata, metadata.pipeline(request.pipeline_code))
    run_id, _ = perform(
        ctx, "run", request.arguments("init_only"), lambda acting: _bind(acting, request)
    )
    return _view(ctx, run_id)


def _bind(acting: Acting, request: RemoteRequest) -> int:
    """The run of the key, live: created, admitted past its gate, or reopened (a cleared DAG
    run, or a task run again after the run ended)."""
    conn, actor = acting.conn, acting.ctx.actor
    run = find_or_create_run(conn, acting.ctx, request.run_request())
    acting.scope = replace(acting.scope, pipeline_id=run.pipeline_id, run_id=run.pipeline_run_id)
    if run.status is RunStatus.QUEUED:
        admit_run(conn, run.pipeline_run_id, actor)
    elif run.status.terminal:
        reopen_run(
            conn,
            run.pipeline_run_id,
            actor,
            message=f"reopened by the orchestrator ({request.run_key}): it runs the run again",
        )
    return run.pipeline_run_id


def run_task(ctx: OperationContext, request: RemoteRequest) -> RunView:
    """Run the task the orchestrator started, as a new attempt, whatever its dependencies."""
    task_code = request.task_code
    assert task_code is not None
    _run_key(request, "--task")
    bypass = Bypass(REMOTE_BYPASS)

    def body(acting: Acting) -> tuple[int, int]:
        run_id = _bind(acting, request)
        run = read_run(acting.conn, run_id)
        gates = Gatekeeper(ctx.engine, run_id, bypass=bypass)
        return run_id, queue_task_attempt(acting, run, gates, task_code, None)

    (run_id, task_id), _ = perform(ctx, "run", request.arguments("remote_task"), body)
    _wait_for_lease(ctx, run_id)
    with ctx.engine.read() as conn:
        run = read_run(conn, run_id)
    supervise_run(ctx, run, frozenset({task_id}), bypass)
    return _view(ctx, run_id)


def _wait_for_lease(ctx: OperationContext, run_id: int) -> None:
    """Tasks of one run are supervised one process at a time: wait while another holds it."""
    lease = ctx.owner.lease_seconds
    minutes = ctx.owner.gate_wait_minutes
    deadline = time.monotonic() + max(minutes * 60.0, lease * 2)
    stop = active()
    me = ctx.owner.owner_id
    while time.monotonic() < deadline:
        with ctx.engine.read() as conn:
            run = read_run(conn, run_id)
        expired = run.lease_expires_at is None or run.lease_expires_at <= utc_now()
        if run.owner_id in (None, me) or expired:
            return
        (time.sleep if stop is None else stop.sleep)(min(1.0, lease / 4))


def finalize_run(ctx: OperationContext, request: RemoteRequest) -> RunView:
    """Record the orchestrator's decisions and end the run (SKIPPED if it ran no task)."""
    require_remote(ctx, "--finalize-only")
    _run_key(request, "--finalize-only")
    reconcile_now(ctx)  # an attempt the orchestrator killed is LOST, hence FAILED, once expired
    run_id, _ = perform(
        ctx, "run", request.arguments("finalize_only"), lambda acting: _finalize(acting, request)
    )
    return _view(ctx, run_id)


def _finalize(acting: Acting, request: RemoteRequest) -> int:
    conn, actor = acting.conn, acting.ctx.actor
    run = find_or_create_run(conn, acting.ctx, request.run_request())
    acting.scope = replace(acting.scope, pipeline_id=run.pipeline_id, run_id=run.pipeline_run_id)
    if run.status.terminal:
        return run.pipeline_run_id  # finalized already: a retried __finalize__ changes nothing
    if run.status is RunStatus.QUEUED:
        admit_run(conn, run.pipeline_run_id, actor)
    rows = read_task_runs(conn, run.pipeline_run_id)
    _refuse_live(
        run,
        [row.attempt_id for row in rows.values() if row.attempt_status in LIVE_ATTEMPT_STATUSES],
    )
    for task in read_pipeline_shape(conn, run.pipeline_id).tasks:
        if task.task_id not in rows:
            skip_task_run(conn, run.pipeline_run_id, task.task_id, actor, message=NOT_RUN)
    statuses = [row.status for row in rows.values()]
    ran = any(row.attempt_count > 0 for row in rows.values())
    failed = [s for s in statuses if s not in (TaskRunStatus.SUCCESS, TaskRunStatus.SKIPPED)]
    status = RunStatus.FAILED if failed else RunStatus.SUCCESS if ran else RunStatus.SKIPPED
    message = (
        f"finalized by the orchestrator: {len(failed)} task(s) did not succeed"
        if failed
        else "finalized by the orchestrator"
        if ran
        else "finalized by the orchestrator, which ran no task"
    )
    finalize_remote_run(conn, run.pipeline_run_id, actor, status=status, message=message)
    # What the run consumed comes from the decisions that admitted its tasks, never re-judged.
    consume_decisions(conn, run.pipeline_run_id)
    return run.pipeline_run_id


def _refuse_live(run: RunRow, live: list[int | None]) -> None:
    if live:
        raise RunStateError(
            f"run {run.pipeline_run_id} of {run.pipeline_code} still has live attempt(s) "
            f"{', '.join(str(a) for a in live)}; finalize once they end (a killed task's attempt "
            "is settled when its lease expires: run etl-craft reconcile, then finalize again)"
        )


def _view(ctx: OperationContext, run_id: int) -> RunView:
    with ctx.engine.read() as conn:
        return read_run_view(conn, run_id)
