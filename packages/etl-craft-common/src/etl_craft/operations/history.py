"""Reading runs: one run's status, and a pipeline's recent runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import ClassVar

from etl_craft.core.enums import RunStatus
from etl_craft.core.errors import NotFoundError, RunStateError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.grid import RunFacts
from etl_craft.operations.context import OperationContext
from etl_craft.operations.run_views import RunView, TaskRunView, pipeline_id_of, read_run_view


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
    with ctx.engine.read() as conn:
        pipeline_id = pipeline_id_of(conn, ctx.project_code, pipeline_code, inactive=True)
        if before is None:
            rows = conn.all("runs_of_pipeline", pipeline_id=pipeline_id, limit=limit)
        else:
            rows = conn.all(
                "runs_of_pipeline_before", pipeline_id=pipeline_id, before=before, limit=limit
            )
    runs = tuple(
        RunSummary(
            run_id=int(row["pipeline_run_id"]),
            run_key=str(row["run_key"]),
            trigger_kind=str(row["trigger_kind"]),
            run_date=row["run_date"]
            if isinstance(row["run_date"], date)
            else date.fromisoformat(str(row["run_date"])),
            status=RunStatus(row["status"]),
            started_at=as_utc(row["start_date"]),
            ended_at=as_utc(row["end_date"]),
            started_by=str(row["started_by"]),
        )
        for row in rows
    )
    return History(pipeline_code, runs)


def run_status(ctx: OperationContext, pipeline_code: str, run_id: int | None) -> RunView:
    """The named run, else the pipeline's single run in progress; never the latest by guess."""
    with ctx.engine.read() as conn:
        pipeline_id = pipeline_id_of(conn, ctx.project_code, pipeline_code, inactive=True)
        if run_id is None:
            live = conn.all("live_runs_of_pipeline", pipeline_id=pipeline_id)
            if len(live) != 1:
                recent = conn.all("runs_of_pipeline", pipeline_id=pipeline_id, limit=5)
                listed = "; ".join(
                    f"run {row['pipeline_run_id']} ({row['status']}, {row['run_key']})"
                    for row in recent
                )
                raise RunStateError(
                    f"pipeline {pipeline_code} has {len(live)} runs in progress, so no run is "
                    f"implied; name one with --run-id. Recent runs: {listed or 'none'}"
                )
            run_id = int(live[0]["pipeline_run_id"])
        view = read_run_view(conn, run_id)
    if view.pipeline_code != pipeline_code:
        raise RunStateError(
            f"run {run_id} belongs to pipeline {view.pipeline_code}, not {pipeline_code}; "
            "check the --run-id"
        )
    return view


def pipeline_of_run(ctx: OperationContext, run_id: int) -> str:
    """The code of the pipeline a run of this project belongs to, found by the run's id."""
    with ctx.engine.read() as conn:
        row = conn.one("run_pipeline_code", run_id=run_id, project_code=ctx.project_code)
    if row is None:
        raise NotFoundError(
            f"project {ctx.project_code} has no run {run_id}; list a pipeline's runs with "
            "etl-craft history --pipeline_code P"
        )
    return str(row["pipeline_code"])


def run_by_id(ctx: OperationContext, run_id: int) -> RunView:
    """A run of this project by its id alone: the status document of that run."""
    return run_status(ctx, pipeline_of_run(ctx, run_id), run_id)


def run_tasks(ctx: OperationContext, run_id: int) -> RunTasks:
    view = run_by_id(ctx, run_id)
    return RunTasks(view.run_id, view.pipeline_code, view.status, view.tasks)
