"""`run --rerun` and `run --skip`: running a recorded task again, and skipping one that has not run.

A rerun goes in stages. The supervisor plans tasks that have no task run and judges again the
skips it made, and starts every QUEUED attempt of its run at once; any other task run that is
already recorded runs again only when its next attempt is queued. So the first stage queues the
named task's next attempt and the supervisor runs it, with what its old outcome had skipped, and
ends the run; each later stage reopens the run (recorded REOPEN) and queues the task runs still
to redo (--with-downstream) whose dependencies are now met, in dependency order, until none is
ready. Between two stages the run is ended for a moment; a rerun stopped there (by a
pause, a cancel or the process dying) says which tasks still need a rerun.

What is redone: without --with-downstream, the downstream task runs the engine skipped (SKIPPED
with no attempt and no operator's SKIP or MARK); with it, every downstream task run except those
an operator skipped. Downstream tasks without a task run are planned by the supervisor as usual.
A queued rerun (the HTTP API's and the web UI's) runs only the first stage here; with
downstream, etl-craft server queues the later ones with ``next_stage`` (downstream_reruns).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import ClassVar

from etl_craft.core.enums import RunStatus, TaskRunStatus
from etl_craft.core.errors import RunStateError
from etl_craft.core.graph import RunState, TaskOutcome
from etl_craft.core.time import utc_now
from etl_craft.enginedb.downstream_reruns import record_downstream_rerun, settle_downstream_reruns
from etl_craft.enginedb.interventions import ActionScope, operator_decisions
from etl_craft.enginedb.runs import (
    RunRow,
    TaskRunRow,
    read_pipeline_shape,
    read_run,
    read_task_runs,
)
from etl_craft.enginedb.transitions import queue_attempt, skip_task_run
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import (
    Acting,
    Intervention,
    perform,
    refuse_live_attempt,
    reopen_for_change,
    require_reason,
    task_codes,
    view_of,
)
from etl_craft.operations.runs.foreground import RunRequest, run_pipeline
from etl_craft.operations.runs.views import RunView
from etl_craft.scheduling.shape import RunShape, build_shape


@dataclass(frozen=True)
class RerunRequest:
    pipeline_code: str
    task_code: str
    reason: str | None
    run_id: int | None = None
    with_downstream: bool = False


@dataclass(frozen=True)
class Rerun:
    schema: ClassVar[str] = "etl-craft/rerun/1"
    action_id: int
    message: str
    stages: tuple[tuple[str, ...], ...]
    still_to_rerun: tuple[str, ...]
    run: RunView


def rerun(ctx: OperationContext, request: RerunRequest) -> Rerun:
    """Queue the task's next attempt, supervise the run, then redo its downstream in stages."""
    reason = require_reason(request.reason, "run --rerun")
    (run_id, task_id), action_id = perform(
        ctx,
        "run",
        _arguments(request, reason),
        lambda acting: _first_stage(acting, request, reason),
    )
    stages: list[tuple[str, ...]] = [(request.task_code,)]
    redone = {task_id}
    view = run_pipeline(ctx, RunRequest(request.pipeline_code, run_id=run_id))
    while view.status in (RunStatus.SUCCESS, RunStatus.FAILED):
        stage = next_stage(ctx, run_id, task_id, redone, request.with_downstream, reason)
        if not stage:
            break
        stages.append(tuple(stage.values()))
        redone |= stage.keys()
        view = run_pipeline(ctx, RunRequest(request.pipeline_code, run_id=run_id))
    left = _still_to_rerun(ctx, run_id, task_id, redone, request.with_downstream)
    return Rerun(action_id, _message(request, view, stages, left), tuple(stages), left, view)


def queue_rerun(ctx: OperationContext, request: RerunRequest) -> Rerun:
    """Queue the task's next attempt and leave the run to etl-craft server (the HTTP API's rerun).

    The server runs the queued attempt and plans tasks that have no task run; with downstream,
    the request is recorded in AUD_DOWNSTREAM_RERUNS and the server queues each later stage
    (the same selection as rerun's) every time the run ends, until nothing is left to redo.
    """
    reason = require_reason(request.reason, "rerun")
    (run_id, _), action_id = perform(
        ctx,
        "run",
        _arguments(request, reason),
        lambda acting: _first_stage(acting, request, reason, carry_on=request.with_downstream),
    )
    view = view_of(ctx, run_id)
    then = (
        "then redoes its downstream task runs as they become ready"
        if request.with_downstream
        else "(downstream task runs are not redone: rerun with downstream for that)"
    )
    message = (
        f"queued a rerun of {request.task_code} in run {run_id}; etl-craft server runs it {then}"
    )
    return Rerun(action_id, message, ((request.task_code,),), (), view)


def _arguments(request: RerunRequest, reason: str) -> dict[str, object]:
    return {
        "pipeline_code": request.pipeline_code,
        "task_code": request.task_code,
        "run_id": request.run_id,
        "rerun": True,
        "with_downstream": request.with_downstream,
        "reason": reason,
    }


def _first_stage(
    acting: Acting, request: RerunRequest, reason: str, *, carry_on: bool = False
) -> tuple[int, int]:
    run = acting.run(request.pipeline_code, request.run_id)
    task_id = acting.task(run, request.task_code)
    _refuse_supervised(run)
    rows = read_task_runs(acting.conn, run.pipeline_run_id)
    row = rows.get(task_id)
    if row is None:
        raise RunStateError(
            f"task {request.task_code} has not run in run {run.pipeline_run_id}, so there is "
            f"nothing to rerun; etl-craft run --pipeline {request.pipeline_code} "
            f"--run {run.pipeline_run_id} runs it (reopen the run first if it has ended)"
        )
    refuse_live_attempt(row, request.task_code, f"rerun of task {request.task_code}")
    shape = build_shape(read_pipeline_shape(acting.conn, run.pipeline_id), 0)
    state = _state_without(rows, {task_id})
    if task_id not in {task.task_id for task in shape.graph.ready(state)}:
        unmet = [u.reason for u in shape.graph.unsatisfiable(state) if u.task.task_id == task_id]
        why = unmet[0] if unmet else "some of its dependencies have not settled"
        raise RunStateError(
            f"rerun of task {request.task_code} refused: its dependencies are not met in run "
            f"{run.pipeline_run_id} ({why}); rerun the upstream task with --with-downstream"
        )
    reopen_for_change(acting, run, reason)
    # A new rerun of the run replaces the downstream rerun the server may still be carrying on.
    settle_downstream_reruns(acting.conn, run.pipeline_run_id)
    if carry_on:
        record_downstream_rerun(
            acting.conn,
            acting.ctx.actor,
            run_id=run.pipeline_run_id,
            task_id=task_id,
            reason=reason,
        )
    _queue(acting, run, shape, [row], reason)
    return run.pipeline_run_id, task_id


def next_stage(
    ctx: OperationContext,
    run_id: int,
    task_id: int,
    redone: set[int],
    with_downstream: bool,
    reason: str,
) -> dict[int, str]:
    """Reopen the run and queue the task runs to redo that are ready now; task id -> code."""
    with ctx.engine.transaction(ctx.actor) as conn:
        acting = Acting(conn, ctx, ActionScope(ctx.project_code))
        run = read_run(conn, run_id)
        rows = read_task_runs(conn, run_id)
        shape = build_shape(read_pipeline_shape(conn, run.pipeline_id), 0)
        todo = to_redo(acting, run_id, shape, task_id, with_downstream) - redone
        ready = [t for t in shape.graph.ready(_state_without(rows, todo)) if t.task_id in todo]
        if not ready:
            return {}
        reopen_for_change(acting, run, reason)
        _queue(acting, run, shape, [rows[t.task_id] for t in ready], reason)
        return {t.task_id: t.code for t in ready}


def to_redo(
    acting: Acting,
    run_id: int,
    shape: RunShape,
    task_id: int,
    with_downstream: bool,
) -> set[int]:
    rows = read_task_runs(acting.conn, run_id)
    decided = operator_decisions(acting.conn, run_id)
    todo = set()
    for downstream in shape.graph.downstream_of(task_id):
        row = rows.get(downstream)
        if row is None or decided.get(row.task_run_id) == "SKIP":
            continue
        engine_skipped = (
            row.status is TaskRunStatus.SKIPPED
            and row.attempt_count == 0
            and row.task_run_id not in decided
        )
        if with_downstream or engine_skipped:
            todo.add(downstream)
    return todo


def _still_to_rerun(
    ctx: OperationContext, run_id: int, task_id: int, redone: set[int], with_downstream: bool
) -> tuple[str, ...]:
    with ctx.engine.read() as conn:
        acting = Acting(conn, ctx, ActionScope(ctx.project_code))
        run = read_run(conn, run_id)
        shape = build_shape(read_pipeline_shape(conn, run.pipeline_id), 0)
        left = to_redo(acting, run_id, shape, task_id, with_downstream) - redone
        codes = task_codes(conn, run)
    return tuple(sorted(codes[task] for task in left))


def _state_without(rows: Mapping[int, TaskRunRow], redo: Collection[int]) -> RunState:
    """The run's outcomes with the tasks to redo left out, as if they had not run."""
    return RunState(
        {
            task_id: TaskOutcome(row.status, row.rows_written or 0)
            for task_id, row in rows.items()
            if task_id not in redo
        }
    )


def _queue(
    acting: Acting, run: RunRow, shape: RunShape, rows: list[TaskRunRow], reason: str
) -> None:
    for row in rows:
        settings = shape.tasks[row.task_id]
        queue_attempt(
            acting.conn,
            row.task_run_id,
            acting.ctx.actor,
            slot_kind=settings.slot_kind,
            pool=settings.pool or run.default_pool,
            priority=run.priority,
        )
        acting.intervene(
            run.pipeline_run_id,
            "RERUN",
            reason,
            task_run_id=row.task_run_id,
            from_status=row.status.value,
            to_status=TaskRunStatus.IN_PROGRESS.value,
        )


def _refuse_supervised(run: RunRow) -> None:
    if run.owner_id is None or run.lease_expires_at is None or run.lease_expires_at < utc_now():
        return
    raise RunStateError(
        f"run {run.pipeline_run_id} of {run.pipeline_code} is supervised by {run.owner_id} "
        f"(lease until {run.lease_expires_at:%Y-%m-%d %H:%M:%S}Z); rerun its tasks once that "
        "process ends, or stop it with etl-craft cancel"
    )


def _message(
    request: RerunRequest,
    view: RunView,
    stages: list[tuple[str, ...]],
    left: tuple[str, ...],
) -> str:
    ran = " then ".join(", ".join(stage) for stage in stages)
    said = f"reran {ran}; run {view.run_id} is {view.status}"
    if not left:
        return said
    remedy = (
        f"etl-craft rerun --pipeline {request.pipeline_code} --run {view.run_id} "
        f"--task {left[0]} --reason ..."
    )
    listed = ", ".join(left)
    if view.status is RunStatus.IN_PROGRESS:
        return f"{said}, stopped before {listed} could rerun (paused?): resume, then {remedy}"
    if view.status is RunStatus.CANCELLED:
        return f"{said}: it was cancelled before {listed} could rerun"
    return f"{said}; {listed} not rerun: their dependencies are not met in this run"


def skip(
    ctx: OperationContext,
    pipeline_code: str,
    task_code: str,
    run_id: int | None,
    reason: str | None,
) -> Intervention:
    """Record a task that has not run in a live run as SKIPPED by an operator."""
    why = require_reason(reason, "run --skip")

    def body(acting: Acting) -> int:
        run = acting.run(pipeline_code, run_id)
        task_id = acting.task(run, task_code)
        if run.status.terminal:
            raise RunStateError(
                f"run {run.pipeline_run_id} of {pipeline_code} has ended {run.status}; reopen it "
                "(etl-craft reopen) before skipping its tasks"
            )
        row = read_task_runs(acting.conn, run.pipeline_run_id).get(task_id)
        if row is not None:
            raise RunStateError(
                f"task {task_code} already has task run {row.task_run_id} ({row.status}) in run "
                f"{run.pipeline_run_id}; change a recorded task with etl-craft mark"
            )
        message = f"skipped by {ctx.actor.name}: {why}"
        task_run_id = skip_task_run(
            acting.conn, run.pipeline_run_id, task_id, ctx.actor, message=message
        )
        acting.intervene(
            run.pipeline_run_id, "SKIP", why, task_run_id=task_run_id, to_status="SKIPPED"
        )
        return run.pipeline_run_id

    arguments: dict[str, object] = {
        "pipeline_code": pipeline_code,
        "task_code": task_code,
        "run_id": run_id,
        "skip": True,
        "reason": why,
    }
    done, action_id = perform(ctx, "run", arguments, body)
    message = f"task {task_code} of run {done} recorded SKIPPED; its downstream plans around it"
    return Intervention("run --skip", action_id, message, view_of(ctx, done))
