"""`rerun ... --plan` and `backfill ... --plan`: what the action would run, and the
tables and columns it would change, read without doing anything (nothing is recorded either).

A rerun runs the named task again and then the task runs reruns select (reruns.to_redo: the
downstream the engine skipped, or every downstream task run with --with-downstream); downstream
tasks without a task run are planned by the run as usual. A backfill runs every active task of
the pipeline once per date. What changes downstream is read from lineage, as plan shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import ClassVar

from etl_craft.core.errors import RunStateError
from etl_craft.enginedb.interventions import ActionScope
from etl_craft.enginedb.lineage import stored_traces
from etl_craft.enginedb.metadata import read_project_metadata
from etl_craft.enginedb.runs import TaskRunRow, read_pipeline_shape, read_task_runs
from etl_craft.lineage import LineageGraph
from etl_craft.lineage.build import build_lineage
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import Acting, task_codes
from etl_craft.operations.lineage import sql_dialect
from etl_craft.operations.project_files import files_if_reachable
from etl_craft.operations.runs.backfills import backfill_dates
from etl_craft.operations.runs.reruns import RerunRequest, to_redo
from etl_craft.operations.specs.effects import downstream_columns
from etl_craft.scheduling.shape import build_shape


@dataclass(frozen=True)
class PlannedTask:
    task_code: str
    task_run_id: int | None  # the task run that runs again; None: a task run to be made
    status: str | None  # the task run's status now
    target: str | None  # the table the task writes
    columns: tuple[str, ...]  # table.column: what it writes, then every column downstream


@dataclass(frozen=True)
class RunActionPlan:
    schema: ClassVar[str] = "etl-craft/run-action-plan/1"
    action: str  # rerun, backfill
    pipeline_code: str
    run_id: int | None  # the run a rerun acts on
    dates: tuple[date, ...]  # the dates a backfill makes runs for
    tasks: tuple[PlannedTask, ...]
    targets: tuple[str, ...]  # every table the action would write

    @property
    def message(self) -> str:
        what = f"run {self.run_id}" if self.run_id else f"{len(self.dates)} date(s)"
        return (
            f"{self.action} of {self.pipeline_code} ({what}) would run {len(self.tasks)} "
            f"task(s) writing {len(self.targets)} table(s); nothing was done"
        )


def rerun_plan(ctx: OperationContext, request: RerunRequest) -> RunActionPlan:
    with ctx.engine.read() as conn:
        acting = Acting(conn, ctx, ActionScope(ctx.project_code))
        run = acting.run(request.pipeline_code, request.run_id)
        task_id = acting.task(run, request.task_code)
        rows = read_task_runs(conn, run.pipeline_run_id)
        if task_id not in rows:
            raise RunStateError(
                f"task {request.task_code} has not run in run {run.pipeline_run_id}, so there "
                "is nothing to rerun; etl-craft run --pipeline "
                f"{request.pipeline_code} --run {run.pipeline_run_id} runs it"
            )
        shape = build_shape(read_pipeline_shape(conn, run.pipeline_id), 0)
        redo = to_redo(acting, run.pipeline_run_id, shape, task_id, request.with_downstream)
        unplanned = {t for t in shape.graph.downstream_of(task_id) if t not in rows}
        codes = task_codes(conn, run)
    graph = _lineage(ctx)
    chosen = [task_id, *sorted(redo | unplanned, key=lambda t: codes[t])]
    tasks = tuple(_planned(graph, request.pipeline_code, codes[t], rows.get(t)) for t in chosen)
    return RunActionPlan(
        "rerun", request.pipeline_code, run.pipeline_run_id, (), tasks, _targets(tasks)
    )


def backfill_plan(ctx: OperationContext, pipeline_code: str, dates: str) -> RunActionPlan:
    days = backfill_dates(dates)
    with ctx.engine.read() as conn:
        pipeline = read_project_metadata(conn, ctx.project_code).pipeline(pipeline_code)
        shape = read_pipeline_shape(conn, pipeline.pipeline_id)
    graph = _lineage(ctx)
    tasks = tuple(_planned(graph, pipeline_code, t.task_code, None) for t in shape.tasks)
    return RunActionPlan("backfill", pipeline_code, None, days, tasks, _targets(tasks))


def _lineage(ctx: OperationContext) -> LineageGraph:
    """The project's lineage from the stored traces, tracing anew what they lack; stores none."""
    with ctx.engine.read() as conn:
        metadata = read_project_metadata(conn, ctx.project_code)
        stored = stored_traces(conn, metadata.project_id)
    return build_lineage(metadata, files_if_reachable(ctx), sql_dialect(ctx), stored=stored).graph


def _planned(graph: LineageGraph, pipeline: str, code: str, row: TaskRunRow | None) -> PlannedTask:
    name = f"{pipeline}.{code}"
    lineage = next((t for t in graph.tasks if t.name == name), None)
    return PlannedTask(
        code,
        None if row is None else row.task_run_id,
        None if row is None else row.status.value,
        None if lineage is None else lineage.target,
        downstream_columns(graph, name) if lineage is not None else (),
    )


def _targets(tasks: tuple[PlannedTask, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.target for t in tasks if t.target is not None))
