"""`etl-craft run`: the request recorded in AUD_ACTIONS, a paused pipeline left alone, the run.

The run is found or created in the transaction that records the request, so the action row
names the run it started or continued. A paused pipeline (or project) with no live run gets no
new run: the request is recorded, nothing else changes, and the answer says how to resume.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import ClassVar

from etl_craft.enginedb.interventions import PauseRow, read_open_pause
from etl_craft.enginedb.metadata import active_project_id
from etl_craft.enginedb.run_lists import live_runs, run_id_by_key
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import Acting, perform
from etl_craft.operations.runs.foreground import RunRequest, find_and_hold_run, run_pipeline
from etl_craft.operations.runs.views import RunView

# Given the run's id, a context in force while it is supervised: live progress, say.
Watch = Callable[[int], AbstractContextManager[object]]


@dataclass(frozen=True)
class PausedPipeline:
    """A run not started because its pipeline or project is paused and has no live run."""

    schema: ClassVar[str] = "etl-craft/run-paused/1"
    pipeline_code: str
    action_id: int
    scope: str  # "pipeline" or "project"
    paused_by: str
    paused_at: datetime
    reason: str
    resume_command: str
    message: str


def request_run(
    ctx: OperationContext, request: RunRequest, watch: Watch | None = None
) -> RunView | PausedPipeline:
    """Record the request, find or create its run (none while paused), and run it."""

    def body(acting: Acting) -> int | tuple[PauseRow, str]:
        pipeline_id = acting.pipeline(request.pipeline_code)
        paused = _pause_blocking_a_new_run(acting, pipeline_id, request)
        if paused is not None:
            return paused
        run = find_and_hold_run(acting.conn, ctx, request)
        acting.scope = replace(acting.scope, run_id=run.pipeline_run_id)
        return run.pipeline_run_id

    done, action_id = perform(ctx, "run", _arguments(request), body)
    if isinstance(done, tuple):
        return _paused(ctx, request, action_id, *done)
    with watch(done) if watch is not None else contextlib.nullcontext():
        return run_pipeline(ctx, replace(request, run_id=done))


def _pause_blocking_a_new_run(
    acting: Acting, pipeline_id: int, request: RunRequest
) -> tuple[PauseRow, str] | None:
    """The open pause of the pipeline (else its project) when the request would create a run."""
    conn = acting.conn
    project_id = active_project_id(conn, acting.ctx.project_code)
    if project_id is None or request.run_id is not None:
        return None
    pipeline_pause = read_open_pause(conn, project_id, pipeline_id)
    found = pipeline_pause or read_open_pause(conn, project_id, None)
    if found is None:
        return None
    if live_runs(conn, pipeline_id):
        return None  # a live run is continued: it stops at the pause, INCOMPLETE
    if request.run_key is not None and run_id_by_key(conn, pipeline_id, request.run_key):
        return None  # the named run exists: continuing it creates nothing
    return found, "pipeline" if pipeline_pause is not None else "project"


def _paused(
    ctx: OperationContext, request: RunRequest, action_id: int, pause: PauseRow, scope: str
) -> PausedPipeline:
    pipeline_flag = f"--pipeline {request.pipeline_code}"
    flag = pipeline_flag if scope == "pipeline" else f"--project {ctx.project_code}"
    resume = f"etl-craft resume {flag}"
    what = f"pipeline {request.pipeline_code}" if scope == "pipeline" else "its project"
    message = (
        f"pipeline {request.pipeline_code} was not run: {what} is paused (by {pause.paused_by} "
        f"since {pause.paused_at:%Y-%m-%d %H:%M}Z: {pause.reason}); no run was created. "
        f"Resume it with {resume}, then run it again"
    )
    return PausedPipeline(
        request.pipeline_code,
        action_id,
        scope,
        pause.paused_by,
        pause.paused_at,
        pause.reason,
        resume,
        message,
    )


def _arguments(request: RunRequest) -> dict[str, object]:
    return {
        "pipeline_code": request.pipeline_code,
        "run_id": request.run_id,
        "run_key": request.run_key,
        "run_date": request.run_date.isoformat() if request.run_date else None,
        "task_codes": list(request.task_codes),
    }
