"""Reading runs: one run's status, and a pipeline's recent runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from etl_craft.core.enums import RunStatus
from etl_craft.core.errors import NotFoundError, RunStateError
from etl_craft.enginedb.grid import RunFacts
from etl_craft.enginedb.run_lists import live_runs, newest_runs, pipeline_code_of_run
from etl_craft.operations.context import OperationContext
from etl_craft.operations.runs.views import RunView, TaskRunView, pipeline_id_of, read_run_view


@dataclass(frozen=True)
class RunSummary(RunFacts):
    """A run of the pipeline whose history is asked for."""


@dataclass(frozen=True)
class History:
    schema: ClassVar[str] = "etl-craft/history/1"
    pipeline_code: str
    runs: tuple[RunSummary, ...]


@dataclass(frozen=True)
class RunTasks:
    schema: ClassVar[str] = "etl-craft/run-tasks/1"
    run_id: int
    pipeline_code: str
    status: RunStatus
    tasks: tuple[TaskRunView, ...]


def history(
    ctx: OperationContext, pipeline_code: str, limit: int = 20, before: int | None = None
) -> History:
    """The pipeline's newest runs; with ``before``, the page of runs older than that run id."""
    with ctx.engine.read_only() as conn:
        pipeline_id = pipeline_id_of(conn, ctx.project_code, pipeline_code, inactive=True)
        rows = newest_runs(conn, pipeline_id, limit, before)
    runs = tuple(
        RunSummary(
            run_id=row.pipeline_run_id,
            run_key=row.run_key,
            trigger_kind=row.trigger_kind,
            run_date=row.run_date,
            status=row.status,
            started_at=row.start_date,
            ended_at=row.end_date,
            started_by=row.started_by,
        )
        for row in rows
    )
    return History(pipeline_code, runs)


def run_status(
    ctx: OperationContext, pipeline_code: str, run_id: int | None, *, or_latest: bool = False
) -> RunView:
    """The named run, else the pipeline's single run in progress; with ``or_latest``, when none
    is in progress, its newest run (what `status` shows: reading is no guess that acts)."""
    with ctx.engine.read_only() as conn:
        pipeline_id = pipeline_id_of(conn, ctx.project_code, pipeline_code, inactive=True)
        if run_id is None:
            live = live_runs(conn, pipeline_id)
            latest = newest_runs(conn, pipeline_id, limit=1) if not live and or_latest else ()
            if not live and or_latest and not latest:
                raise NotFoundError(
                    f"pipeline {pipeline_code} has no runs yet; etl-craft run --pipeline "
                    f"{pipeline_code} starts one"
                )
            if latest:
                run_id = latest[0].pipeline_run_id
            elif len(live) != 1:
                recent = newest_runs(conn, pipeline_id, limit=5)
                listed = "; ".join(
                    f"run {row.pipeline_run_id} ({row.status}, {row.run_key})" for row in recent
                )
                raise RunStateError(
                    f"pipeline {pipeline_code} has {len(live)} runs in progress, so no run is "
                    f"implied; name one with --run. Recent runs: {listed or 'none'}"
                )
            else:
                run_id = live[0].pipeline_run_id
        view = read_run_view(conn, run_id)
    if view.pipeline_code != pipeline_code:
        raise RunStateError(
            f"run {run_id} belongs to pipeline {view.pipeline_code}, not {pipeline_code}; "
            "check the --run"
        )
    return view


def pipeline_of_run(ctx: OperationContext, run_id: int) -> str:
    """The code of the pipeline a run of this project belongs to, found by the run's id."""
    with ctx.engine.read_only() as conn:
        code = pipeline_code_of_run(conn, run_id, ctx.project_code)
    if code is None:
        raise NotFoundError(
            f"project {ctx.project_code} has no run {run_id}; list a pipeline's runs with "
            "etl-craft history --pipeline P"
        )
    return code


def run_by_id(ctx: OperationContext, run_id: int) -> RunView:
    """A run of this project by its id alone: the status document of that run."""
    return run_status(ctx, pipeline_of_run(ctx, run_id), run_id)


def run_tasks(ctx: OperationContext, run_id: int) -> RunTasks:
    view = run_by_id(ctx, run_id)
    return RunTasks(view.run_id, view.pipeline_code, view.status, view.tasks)
