"""Operator interventions on runs: mark, cancel and reopen, and what every intervention shares.

Each records its request in AUD_ACTIONS and its change in AUD_RUN_INTERVENTIONS, with the
actor and the reason, in the transaction that makes the change; a refused request changes
nothing and is recorded REFUSED.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, TypeVar

from etl_craft.core.enums import LIVE_ATTEMPT_STATUSES, AttemptStatus, RunStatus, TaskRunStatus
from etl_craft.core.errors import (
    NotFoundError,
    RunStateError,
    StaleTransitionError,
    UsageError,
)
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.controls import record_intervention
from etl_craft.enginedb.interventions import REFUSED, ActionScope, record_scoped_action
from etl_craft.enginedb.run_lists import ListedRun, live_runs, newest_runs
from etl_craft.enginedb.runs import (
    RunRow,
    TaskRunRow,
    read_pipeline_shape,
    read_run,
    read_task_runs,
)
from etl_craft.enginedb.transitions import (
    cancel_queued_attempt,
    cancel_run,
    mark_run,
    mark_task_run,
    reopen_run,
    request_cancel,
    skip_task_run,
)
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.rejudging import rejudge_gated
from etl_craft.operations.remote.rules import refuse_in_remote_mode
from etl_craft.operations.runs.views import RunView, pipeline_id_of, read_run_view

T = TypeVar("T")
REFUSALS = (NotFoundError, RunStateError, StaleTransitionError, UsageError)


@dataclass(frozen=True)
class Intervention:
    schema: ClassVar[str] = "etl-craft/intervention/1"
    command: str
    action_id: int
    message: str
    run: RunView
    pending_attempts: tuple[int, ...] = ()


@dataclass(frozen=True)
class MarkRequest:
    pipeline_code: str
    status: str
    reason: str
    run_id: int | None = None
    task_code: str | None = None
    rows: int | None = None


@dataclass
class Acting:
    """A request being carried out: its transaction, and the scope its record will name."""

    conn: EngineConnection
    ctx: OperationContext
    scope: ActionScope

    def pipeline(self, pipeline_code: str, *, inactive: bool = False) -> int:
        pipeline_id = pipeline_id_of(
            self.conn, self.ctx.project_code, pipeline_code, inactive=inactive
        )
        self.scope = replace(self.scope, pipeline_id=pipeline_id)
        return pipeline_id

    def run(self, pipeline_code: str, run_id: int | None, *, inactive: bool = False) -> RunRow:
        pipeline_id = self.pipeline(pipeline_code, inactive=inactive)
        run = select_run(self.conn, pipeline_id, pipeline_code, run_id)
        self.scope = replace(self.scope, run_id=run.pipeline_run_id)
        return run

    def task(self, run: RunRow, task_code: str) -> int:
        task_id = task_id_of(self.conn, run, task_code)
        self.scope = replace(self.scope, task_id=task_id)
        return task_id

    def intervene(self, run_id: int, kind: str, reason: str, **details: Any) -> None:
        """One AUD_RUN_INTERVENTIONS row; ``details`` are task_run_id, from/to status, rows."""
        record_intervention(
            self.conn, self.ctx.actor, run_id=run_id, kind=kind, reason=reason, **details
        )


def perform(
    ctx: OperationContext, command: str, arguments: dict[str, object], body: Callable[[Acting], T]
) -> tuple[T, int]:
    """Run ``body`` in one transaction with its AUD_ACTIONS row; record a refusal on its own."""
    started_at = utc_now()
    scope = ActionScope(ctx.project_code)
    acting: Acting | None = None
    try:
        with ctx.engine.transaction(ctx.actor) as conn:
            acting = Acting(conn, ctx, scope)
            done = body(acting)
            action_id = record_scoped_action(
                conn,
                ctx.actor,
                command=command,
                arguments=arguments,
                started_at=started_at,
                scope=acting.scope,
            )
        return done, action_id
    except REFUSALS as refusal:
        with ctx.engine.transaction(ctx.actor) as conn:
            record_scoped_action(
                conn,
                ctx.actor,
                command=command,
                arguments=arguments,
                started_at=started_at,
                scope=acting.scope if acting else scope,
                outcome=REFUSED,
                exit_code=int(refusal.exit_code),
            )
        raise


def require_reason(reason: str | None, command: str) -> str:
    if reason is None or not reason.strip():
        raise UsageError(
            f'{command} needs a reason, found none; say why with --reason "..." so the '
            "intervention can be understood later"
        )
    return reason.strip()


def select_run(
    conn: EngineConnection, pipeline_id: int, pipeline_code: str, run_id: int | None
) -> RunRow:
    """The named run of the pipeline, else its single non-terminal run; never the latest."""
    if run_id is not None:
        run = read_run(conn, run_id)
        if run.pipeline_id != pipeline_id:
            raise RunStateError(
                f"run {run_id} belongs to pipeline {run.pipeline_code}, not {pipeline_code}; "
                "check the --run"
            )
        return run
    live = live_runs(conn, pipeline_id)
    if len(live) == 1:
        return read_run(conn, live[0].pipeline_run_id)
    candidates: Sequence[ListedRun] = live or newest_runs(conn, pipeline_id, limit=5)
    raise RunStateError(
        f"pipeline {pipeline_code} has {len(live)} runs in progress, so no run is implied; "
        f"name one with --run. Candidates: {_listed(candidates)}"
    )


def task_id_of(conn: EngineConnection, run: RunRow, task_code: str) -> int:
    tasks = read_pipeline_shape(conn, run.pipeline_id).tasks
    for task in tasks:
        if task.task_code == task_code:
            return task.task_id
    codes = ", ".join(task.task_code for task in tasks) or "none"
    raise NotFoundError(
        f"pipeline {run.pipeline_code} has no active task {task_code!r}; its tasks are: {codes}"
    )


def refuse_live_attempt(row: TaskRunRow | None, task_code: str, what: str) -> None:
    if row is None or row.attempt_status not in LIVE_ATTEMPT_STATUSES:
        return
    owner = f" owned by {row.owner_id}" if row.owner_id else ""
    raise RunStateError(
        f"{what} refused: task {task_code} has attempt {row.attempt_id} {row.attempt_status}"
        f"{owner} (task run {row.task_run_id}); wait for it to end, or stop it with "
        "etl-craft cancel --pipeline P --reason ..."
    )


def reopen_for_change(acting: Acting, run: RunRow, reason: str) -> None:
    """Reopen an ended run (recorded REOPEN) so that a later run continues from its tasks."""
    if not run.status.terminal:
        return
    refuse_other_live_run(acting.conn, run)
    reopen_run(acting.conn, run.pipeline_run_id, acting.ctx.actor, message=f"reopened: {reason}")
    acting.intervene(
        run.pipeline_run_id,
        "REOPEN",
        reason,
        from_status=run.status.value,
        to_status=RunStatus.IN_PROGRESS.value,
    )


def refuse_other_live_run(conn: EngineConnection, run: RunRow) -> None:
    live = [
        row
        for row in live_runs(conn, run.pipeline_id)
        if row.pipeline_run_id != run.pipeline_run_id
    ]
    if live:
        raise RunStateError(
            f"run {run.pipeline_run_id} of {run.pipeline_code} cannot be reopened while another "
            f"run of the pipeline is live: {_listed(live)}; let it end or cancel it first"
        )


def mark(ctx: OperationContext, request: MarkRequest) -> Intervention:
    reason = require_reason(request.reason, "mark")

    def body(acting: Acting) -> tuple[int, str]:
        refuse_in_remote_mode(ctx, "mark")
        run = acting.run(request.pipeline_code, request.run_id)
        if request.task_code is None:
            return run.pipeline_run_id, _mark_run(acting, run, request, reason)
        return run.pipeline_run_id, _mark_task(acting, run, request, reason)

    (run_id, message), action_id = perform(ctx, "mark", _arguments(request), body)
    return Intervention("mark", action_id, message, view_of(ctx, run_id))


def _mark_run(acting: Acting, run: RunRow, request: MarkRequest, reason: str) -> str:
    status = RunStatus(request.status)
    if run.status is status:
        raise RunStateError(
            f"mark of run {run.pipeline_run_id} of {run.pipeline_code} refused: it is already "
            f"{status}, so there is nothing to change; nothing was recorded"
        )
    codes = task_codes(acting.conn, run)
    for row in read_task_runs(acting.conn, run.pipeline_run_id).values():
        refuse_live_attempt(row, codes.get(row.task_id, "?"), f"mark of run {run.pipeline_run_id}")
    message = f"marked {status} by {acting.ctx.actor.name}: {reason}"
    mark_run(acting.conn, run.pipeline_run_id, acting.ctx.actor, status=status, message=message)
    acting.intervene(
        run.pipeline_run_id, "MARK", reason, from_status=run.status.value, to_status=status.value
    )
    return f"run {run.pipeline_run_id} of {run.pipeline_code} marked {status} (was {run.status})"


def _mark_task(acting: Acting, run: RunRow, request: MarkRequest, reason: str) -> str:
    assert request.task_code is not None
    status = TaskRunStatus(request.status)
    task_id = acting.task(run, request.task_code)
    row = read_task_runs(acting.conn, run.pipeline_run_id).get(task_id)
    refuse_live_attempt(row, request.task_code, f"mark of task {request.task_code}")
    if row is not None and not row.status.terminal:
        raise RunStateError(
            f"mark of task {request.task_code} refused: its task run {row.task_run_id} is "
            f"{row.status} with no live attempt; settle it with etl-craft reconcile first"
        )
    if row is not None and row.status is status and request.rows in (None, row.rows_written):
        raise RunStateError(
            f"mark of task {request.task_code} in run {run.pipeline_run_id} refused: it is "
            f"already {status}, so there is nothing to change; nothing was recorded"
        )
    reopen_for_change(acting, run, reason)
    message = f"marked {status} by {acting.ctx.actor.name}: {reason}"
    actor = acting.ctx.actor
    if row is None:
        # A task that never ran gets its task run as marked: created settled, then marked.
        task_run_id = skip_task_run(
            acting.conn, run.pipeline_run_id, task_id, actor, message=message
        )
    else:
        task_run_id = row.task_run_id
    mark_task_run(
        acting.conn, task_run_id, actor, status=status, message=message, rows_written=request.rows
    )
    acting.intervene(
        run.pipeline_run_id,
        "MARK",
        reason,
        task_run_id=task_run_id,
        from_status=row.status.value if row else None,
        to_status=status.value,
        rows_written=request.rows,
    )
    said = f"task {request.task_code} of run {run.pipeline_run_id} marked {status}"
    said += f" (was {row.status.value if row else 'not run'})"
    change = f"{request.task_code} was {message}"
    unblocked = rejudge_gated(acting.conn, actor, run, task_id, change)
    if unblocked:
        said += f"; runnable again: {', '.join(unblocked)}"
    if run.status.terminal:
        said += "; the run is reopened and etl-craft run continues it"
    return said


def cancel(
    ctx: OperationContext, pipeline_code: str, run_id: int | None, reason: str | None
) -> Intervention:
    why = require_reason(reason, "cancel")

    def body(acting: Acting) -> tuple[int, str, tuple[int, ...]]:
        refuse_in_remote_mode(ctx, "cancel")
        # Deactivating a pipeline leaves its live runs to settle: cancel must still reach them.
        run = acting.run(pipeline_code, run_id, inactive=True)
        if run.status.terminal:
            raise RunStateError(
                f"run {run.pipeline_run_id} of {pipeline_code} has ended {run.status}; there is "
                "nothing to cancel (reopen it first to change it)"
            )
        acting.intervene(
            run.pipeline_run_id,
            "CANCEL",
            why,
            from_status=run.status.value,
            to_status=RunStatus.CANCELLED.value,
        )
        owned = _cancel_attempts(acting, run, why)
        if not owned:
            cancel_run(
                acting.conn,
                run.pipeline_run_id,
                ctx.actor,
                message=f"cancelled by {ctx.actor.name}: {why}",
            )
            return run.pipeline_run_id, f"run {run.pipeline_run_id} cancelled", ()
        return run.pipeline_run_id, _stopping(run, owned), tuple(a for a, _ in owned)

    (run_id_done, message, pending), action_id = perform(
        ctx, "cancel", {"pipeline_code": pipeline_code, "run_id": run_id, "reason": why}, body
    )
    return Intervention("cancel", action_id, message, view_of(ctx, run_id_done), pending)


def _cancel_attempts(acting: Acting, run: RunRow, reason: str) -> list[tuple[int, TaskRunRow]]:
    """Cancel what waits; ask owners to stop what runs. Returns the attempts still running."""
    owned = []
    for row in read_task_runs(acting.conn, run.pipeline_run_id).values():
        if row.attempt_id is None or row.attempt_status not in LIVE_ATTEMPT_STATUSES:
            continue
        if row.attempt_status is AttemptStatus.QUEUED:
            cancel_queued_attempt(
                acting.conn,
                row.attempt_id,
                acting.ctx.actor,
                message=f"cancelled by {acting.ctx.actor.name}: {reason}",
            )
        else:
            request_cancel(acting.conn, row.attempt_id, acting.ctx.actor)
            owned.append((row.attempt_id, row))
    return owned


def _stopping(run: RunRow, owned: Sequence[tuple[int, TaskRunRow]]) -> str:
    listed = ", ".join(
        f"attempt {a} ({row.attempt_status}, owner {row.owner_id})" for a, row in owned
    )
    return (
        f"cancel of run {run.pipeline_run_id} requested: {listed} still running; the process "
        "supervising the run stops them and ends the run CANCELLED (if that process is gone, "
        "etl-craft reconcile settles them and the next etl-craft run ends it)"
    )


def reopen(
    ctx: OperationContext, pipeline_code: str, run_id: int, reason: str | None
) -> Intervention:
    why = require_reason(reason, "reopen")

    def body(acting: Acting) -> int:
        run = acting.run(pipeline_code, run_id)
        if not run.status.terminal:
            raise RunStateError(
                f"run {run_id} of {pipeline_code} is {run.status}, not ended; only an ended run "
                "can be reopened (etl-craft run continues a live one)"
            )
        reopen_for_change(acting, run, why)
        return run.pipeline_run_id

    done, action_id = perform(
        ctx, "reopen", {"pipeline_code": pipeline_code, "run_id": run_id, "reason": why}, body
    )
    message = f"run {done} reopened; etl-craft run --pipeline {pipeline_code} continues it"
    return Intervention("reopen", action_id, message, view_of(ctx, done))


def view_of(ctx: OperationContext, run_id: int) -> RunView:
    with ctx.engine.read() as conn:
        return read_run_view(conn, run_id)


def task_codes(conn: EngineConnection, run: RunRow) -> dict[int, str]:
    return {t.task_id: t.task_code for t in read_pipeline_shape(conn, run.pipeline_id).tasks}


def _arguments(request: MarkRequest) -> dict[str, object]:
    return {
        "pipeline_code": request.pipeline_code,
        "run_id": request.run_id,
        "task_code": request.task_code,
        "status": request.status,
        "reason": request.reason,
        "rows": request.rows,
    }


def _listed(rows: Sequence[ListedRun]) -> str:
    return "; ".join(row.listed() for row in rows) or "none"
