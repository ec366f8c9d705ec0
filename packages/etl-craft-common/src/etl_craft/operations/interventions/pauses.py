"""Pausing and resuming a pipeline, or a whole project.

A pause stops new starts: a supervisor lets its running attempts finish, then leaves its run
IN-PROGRESS for a later `etl-craft run` after `resume`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from etl_craft.core.errors import NotFoundError, RunStateError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.interventions import (
    PauseRow,
    close_pause,
    open_pause,
    read_open_pause,
    read_pause,
)
from etl_craft.enginedb.metadata import active_project_id, read_pipelines
from etl_craft.enginedb.run_lists import live_runs
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import Acting, perform, require_reason


@dataclass(frozen=True)
class PauseRequest:
    """A pipeline's pause, or the whole project's when ``pipeline_code`` is None."""

    pipeline_code: str | None
    reason: str | None = None


@dataclass(frozen=True)
class Pause:
    schema: ClassVar[str] = "etl-craft/pause/1"
    command: str
    action_id: int
    pause_id: int
    project_code: str
    pipeline_code: str | None
    reason: str
    paused_at: datetime
    paused_by: str
    resumed_at: datetime | None
    resumed_by: str | None
    live_runs: tuple[int, ...]

    @property
    def scope(self) -> str:
        return f"pipeline {self.pipeline_code}" if self.pipeline_code else "every pipeline"


def pause(ctx: OperationContext, request: PauseRequest) -> Pause:
    reason = require_reason(request.reason, "pause")

    def body(acting: Acting) -> tuple[PauseRow, tuple[int, ...]]:
        project_id, pipeline_id = _scope(acting, request)
        pause_id = open_pause(
            acting.conn,
            ctx.actor,
            project_id=project_id,
            pipeline_id=pipeline_id,
            reason=reason,
        )
        if pause_id is None:
            found = read_open_pause(acting.conn, project_id, pipeline_id)
            raise RunStateError(
                f"{_named(ctx, request)} is paused already{_since(found)}; resume it first "
                f"(etl-craft resume {_flag(ctx, request)}) to pause it with another reason"
            )
        return read_pause(acting.conn, pause_id), _live_runs(acting.conn, project_id, pipeline_id)

    (row, live), action_id = perform(ctx, "pause", _arguments(request, reason), body)
    return _view(ctx, "pause", action_id, request, row, live)


def resume(ctx: OperationContext, request: PauseRequest) -> Pause:
    def body(acting: Acting) -> tuple[PauseRow, tuple[int, ...]]:
        project_id, pipeline_id = _scope(acting, request)
        pause_id = close_pause(
            acting.conn, ctx.actor, project_id=project_id, pipeline_id=pipeline_id
        )
        if pause_id is None:
            raise RunStateError(
                f"{_named(ctx, request)} is not paused, so there is nothing to resume"
                f"{_other_pause(acting.conn, ctx.project_code, project_id, pipeline_id)}"
            )
        return read_pause(acting.conn, pause_id), _live_runs(acting.conn, project_id, pipeline_id)

    (row, live), action_id = perform(ctx, "resume", _arguments(request, request.reason), body)
    return _view(ctx, "resume", action_id, request, row, live)


def _scope(acting: Acting, request: PauseRequest) -> tuple[int, int | None]:
    project_id = active_project_id(acting.conn, acting.ctx.project_code)
    if project_id is None:
        raise NotFoundError(
            f"the Engine DB has no active project {acting.ctx.project_code}; create it with "
            "etl-craft init-db, or check Orchestration.project in craft-connector.yml"
        )
    if request.pipeline_code is None:
        return project_id, None
    return project_id, acting.pipeline(request.pipeline_code)


def _live_runs(conn: EngineConnection, project_id: int, pipeline_id: int | None) -> tuple[int, ...]:
    """The runs the change affects that are in progress now (a supervisor may be running them)."""
    if pipeline_id is not None:
        return tuple(row.pipeline_run_id for row in live_runs(conn, pipeline_id))
    return tuple(
        run
        for pipeline in read_pipelines(conn, project_id)
        for run in _live_runs(conn, project_id, pipeline.pipeline_id)
    )


def _other_pause(
    conn: EngineConnection, project_code: str, project_id: int, pipeline_id: int | None
) -> str:
    if pipeline_id is not None:
        project = read_open_pause(conn, project_id, None)
        if project is not None:
            return (
                f"; the whole project is paused{_since(project)}: resume it with "
                f"etl-craft resume --project {project_code}"
            )
    return ""


def _since(found: PauseRow | None) -> str:
    if found is None:
        return ""
    return f" (by {found.paused_by} since {found.paused_at:%Y-%m-%d %H:%M}Z: {found.reason})"


def _named(ctx: OperationContext, request: PauseRequest) -> str:
    if request.pipeline_code is None:
        return f"project {ctx.project_code}"
    return f"pipeline {request.pipeline_code}"


def _flag(ctx: OperationContext, request: PauseRequest) -> str:
    if request.pipeline_code is None:
        return f"--project {ctx.project_code}"
    return f"--pipeline {request.pipeline_code}"


def _arguments(request: PauseRequest, reason: str | None) -> dict[str, object]:
    return {
        "pipeline_code": request.pipeline_code,
        "project": request.pipeline_code is None,
        "reason": reason,
    }


def _view(
    ctx: OperationContext,
    command: str,
    action_id: int,
    request: PauseRequest,
    row: PauseRow,
    live: tuple[int, ...],
) -> Pause:
    return Pause(
        command=command,
        action_id=action_id,
        pause_id=row.pause_id,
        project_code=ctx.project_code,
        pipeline_code=request.pipeline_code,
        reason=row.reason,
        paused_at=row.paused_at,
        paused_by=row.paused_by,
        resumed_at=row.resumed_at,
        resumed_by=row.resumed_by,
        live_runs=live,
    )
