"""`run --force` and `run --ignore-dependencies`: running tasks whatever their dependencies say.

--force runs one task now. Its next attempt is queued directly, in one transaction with the
FORCE intervention and a BYPASSED decision for each of its dependencies on other pipelines, the
way a rerun queues one; the supervisor then runs only that task and leaves the rest of the run
to be planned as usual. A task without a task run gets one; a settled one gets its next attempt.
Its dependencies in its own pipeline are not waited for: forcing means "now".

--ignore-dependencies runs the whole pipeline with every dependency met by any settled outcome:
a task still runs after its upstreams (order is kept, so it reads what they left), whatever
they ended as, and dependencies on other pipelines are BYPASSED, never waited for. The rule
holds for this invocation: a later etl-craft run of the same run plans by dependencies again.

A new run's pipeline gate is BYPASSED too, with the same reason: a forced task should not wait
for, or be skipped by, the gate of the run it is forced into.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import ClassVar

from etl_craft.core.enums import RunStatus, TaskRunStatus
from etl_craft.core.errors import RunStateError
from etl_craft.enginedb.runs import RunRow, read_pipeline_shape, read_run, read_task_runs
from etl_craft.enginedb.transitions import create_task_run
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import (
    Acting,
    perform,
    refuse_live_attempt,
    require_reason,
    task_id_of,
    view_of,
)
from etl_craft.operations.runs.foreground import (
    RunRequest,
    admitted_run,
    supervise_run,
)
from etl_craft.operations.runs.views import RunView, pipeline_id_of
from etl_craft.scheduling.driver import queue_next_attempt
from etl_craft.scheduling.gatekeeper import Bypass, Gatekeeper
from etl_craft.scheduling.shape import build_shape


@dataclass(frozen=True)
class ForceRequest:
    pipeline_code: str
    reason: str | None
    task_code: str | None = None  # None: the whole pipeline, --ignore-dependencies
    run_id: int | None = None
    run_key: str | None = None
    run_date: date | None = None

    def run_request(self) -> RunRequest:
        return RunRequest(self.pipeline_code, self.run_id, self.run_key, self.run_date)

    def arguments(self, reason: str) -> dict[str, object]:
        flag = "ignore_dependencies" if self.task_code is None else "force"
        return {
            "pipeline_code": self.pipeline_code,
            "task_code": self.task_code,
            "run_id": self.run_id,
            "run_key": self.run_key,
            flag: True,
            "reason": reason,
        }


@dataclass(frozen=True)
class Forced:
    schema: ClassVar[str] = "etl-craft/forced/1"
    command: str
    action_id: int
    message: str
    run: RunView


def force(ctx: OperationContext, request: ForceRequest) -> Forced:
    """Queue the task's next attempt past its dependencies, then supervise that task alone."""
    task_code = request.task_code
    assert task_code is not None
    reason = require_reason(request.reason, "run --force")
    _require_task(ctx, request.pipeline_code, task_code)
    bypass = Bypass(f"forced by {ctx.actor.name}: {reason}")
    with admitted_run(ctx, request.run_request(), bypass) as held:
        run = _live(held.run)
        gates = Gatekeeper(ctx.engine, run.pipeline_run_id, bypass=bypass)
        task_id, action_id = perform(
            ctx,
            "run",
            request.arguments(reason),
            lambda acting: queue_task_attempt(acting, run, gates, task_code, reason),
        )
        supervise_run(ctx, held, frozenset({task_id}))
    view = view_of(ctx, run.pipeline_run_id)
    ran = next((task for task in view.tasks if task.task_code == task_code), None)
    ended = ran.status.value if ran and ran.status else "NOT RUN"
    message = f"task {task_code} forced in run {run.pipeline_run_id}: {ended}"
    return Forced("run --force", action_id, message, view)


def ignore_dependencies(ctx: OperationContext, request: ForceRequest) -> Forced:
    """Supervise the whole run with every dependency met by any settled outcome."""
    reason = require_reason(request.reason, "run --ignore-dependencies")
    bypass = Bypass(f"dependencies ignored by {ctx.actor.name}: {reason}")
    with admitted_run(ctx, request.run_request(), bypass) as held:
        run = _live(held.run)

        def body(acting: Acting) -> None:
            acting.scope = replace(
                acting.scope, pipeline_id=run.pipeline_id, run_id=run.pipeline_run_id
            )
            acting.intervene(run.pipeline_run_id, "IGNORE_DEPENDENCIES", reason)

        _, action_id = perform(ctx, "run", request.arguments(reason), body)
        supervise_run(ctx, held, None, bypass)
    view = view_of(ctx, run.pipeline_run_id)
    message = f"run {run.pipeline_run_id} ran with its dependencies ignored: {view.status}"
    return Forced("run --ignore-dependencies", action_id, message, view)


def _require_task(ctx: OperationContext, pipeline_code: str, task_code: str) -> None:
    """Refuse an unknown task before a run is created for it."""
    with ctx.engine.read() as conn:
        pipeline_id = pipeline_id_of(conn, ctx.project_code, pipeline_code)
        tasks = {task.task_code for task in read_pipeline_shape(conn, pipeline_id).tasks}
    if task_code not in tasks:
        listed = ", ".join(sorted(tasks)) or "none"
        raise RunStateError(
            f"pipeline {pipeline_code} has no active task {task_code!r} to force; its tasks "
            f"are: {listed}"
        )


def _live(run: RunRow) -> RunRow:
    if run.status is not RunStatus.IN_PROGRESS:
        raise RunStateError(
            f"run {run.pipeline_run_id} of {run.pipeline_code} is {run.status}, not IN-PROGRESS, "
            "so nothing can be forced into it; reopen it (etl-craft reopen) first"
        )
    return run


def queue_task_attempt(
    acting: Acting, run: RunRow, gates: Gatekeeper, task_code: str, reason: str | None
) -> int:
    """Queue the task's next attempt with its bypassed gates, and its FORCE intervention when
    an operator gave a reason (remote mode queues what the orchestrator decided: none)."""
    conn, actor = acting.conn, acting.ctx.actor
    acting.scope = replace(acting.scope, pipeline_id=run.pipeline_id, run_id=run.pipeline_run_id)
    task_id = task_id_of(conn, read_run(conn, run.pipeline_run_id), task_code)
    acting.scope = replace(acting.scope, task_id=task_id)
    row = read_task_runs(conn, run.pipeline_run_id).get(task_id)
    refuse_live_attempt(row, task_code, f"force of task {task_code}")
    shape = build_shape(read_pipeline_shape(conn, run.pipeline_id), 0)
    # The gatekeeper's bypass covers every dependency it is asked about: only this task's.
    gated = [dependency for dependency in shape.external if dependency.task_id == task_id]
    gates.judge_all(gated)
    gates.record(conn, gated)
    task_run_id = (
        create_task_run(conn, run.pipeline_run_id, task_id, actor)
        if row is None
        else row.task_run_id
    )
    queue_next_attempt(conn, run, task_run_id, shape.tasks[task_id], actor)
    if reason is None:
        return task_id
    acting.intervene(
        run.pipeline_run_id,
        "FORCE",
        reason,
        task_run_id=task_run_id,
        from_status=row.status.value if row else None,
        to_status=TaskRunStatus.IN_PROGRESS.value,
    )
    return task_id
