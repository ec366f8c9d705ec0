"""The read-only inspection views: list (pipelines), graph (a pipeline's edges), steps (waves).

Waves are for display only: a run starts each task as soon as its own condition is met.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import ClassVar

from etl_craft.core.cron import cron_problem, next_after
from etl_craft.core.enums import DependencyType, Handler, RunCondition, RunStatus
from etl_craft.core.errors import MetadataError
from etl_craft.core.graph import DependencyGraph, TaskEdge, TaskNode
from etl_craft.core.time import utc_now
from etl_craft.enginedb.metadata import (
    LastRun,
    OpenPause,
    PipelineRow,
    ProjectMetadata,
    TaskRow,
    read_last_runs,
    read_open_pauses,
    read_project_metadata,
)
from etl_craft.operations.context import OperationContext
from etl_craft.operations.validate.blocking import NO_FINDINGS, blocking_findings
from etl_craft.operations.validate.findings import Finding


@dataclass(frozen=True)
class LastRunView:
    pipeline_run_id: int
    status: RunStatus
    run_date: date
    ended_at: datetime | None


@dataclass(frozen=True)
class PipelineSummary:
    pipeline_code: str
    description: str | None
    schedule: str | None
    timezone: str
    next_run: datetime | None  # UTC; None when manual only, paused or the schedule is invalid
    schedule_problem: str | None
    last_run: LastRunView | None
    paused: bool
    pause_reason: str | None
    blocking_findings: tuple[Finding, ...]  # they keep it from running; validate lists them


@dataclass(frozen=True)
class PipelineList:
    schema: ClassVar[str] = "etl-craft/list/1"
    project: str
    pipelines: tuple[PipelineSummary, ...]


@dataclass(frozen=True)
class UpstreamView:
    task_code: str
    pipeline_code: str
    type: DependencyType
    cross_pipeline: bool
    active: bool


@dataclass(frozen=True)
class GraphTask:
    task_code: str
    handler: Handler
    run_condition: RunCondition
    required_count: int | None
    upstream: tuple[UpstreamView, ...]


@dataclass(frozen=True)
class PipelineUpstreamView:
    pipeline_code: str
    type: DependencyType
    active: bool


@dataclass(frozen=True)
class PipelineGraph:
    schema: ClassVar[str] = "etl-craft/graph/1"
    project: str
    pipeline_code: str
    depends_on_pipelines: tuple[PipelineUpstreamView, ...]
    tasks: tuple[GraphTask, ...]
    blocking_findings: tuple[Finding, ...]


@dataclass(frozen=True)
class Step:
    task_code: str
    handler: Handler
    action: str | None


@dataclass(frozen=True)
class Wave:
    number: int
    tasks: tuple[Step, ...]


@dataclass(frozen=True)
class PipelineSteps:
    schema: ClassVar[str] = "etl-craft/steps/1"
    project: str
    pipeline_code: str
    waves: tuple[Wave, ...]


def list_pipelines(ctx: OperationContext, now: datetime | None = None) -> PipelineList:
    with ctx.engine.read_only() as conn:
        metadata = read_project_metadata(conn, ctx.project_code)
        last_runs = read_last_runs(conn, metadata.project_id)
        pauses = read_open_pauses(conn, metadata.project_id)
    instant = now or utc_now()
    blocked = blocking_findings(metadata)
    summaries = tuple(
        replace(
            pipeline_summary(
                p, ctx.timezone, instant, last_runs.get(p.pipeline_id), pause_of(p, pauses)
            ),
            blocking_findings=blocked.get(p.code, NO_FINDINGS),
        )
        for p in metadata.pipelines
        if p.active
    )
    return PipelineList(project=metadata.project_code, pipelines=summaries)


def pause_of(pipeline: PipelineRow, pauses: tuple[OpenPause, ...]) -> OpenPause | None:
    # A pause of the pipeline itself says more than one of the whole project.
    own = [p for p in pauses if p.pipeline_id == pipeline.pipeline_id]
    return next(iter(own or [p for p in pauses if p.pipeline_id is None]), None)


def pipeline_summary(
    pipeline: PipelineRow,
    project_zone: str,
    now: datetime,
    last: LastRun | None,
    pause: OpenPause | None,
) -> PipelineSummary:
    zone = pipeline.schedule_timezone or project_zone
    next_run, problem = None, None
    if pipeline.run_schedule is not None:
        problem = cron_problem(pipeline.run_schedule)
        if problem is None:
            try:
                next_run = next_after(pipeline.run_schedule, now, zone)
            except ValueError as error:  # an unknown time zone
                problem = str(error)
    return PipelineSummary(
        pipeline_code=pipeline.code,
        description=pipeline.description,
        schedule=pipeline.run_schedule,
        timezone=zone,
        next_run=None if pause else next_run,
        schedule_problem=problem,
        last_run=None if last is None else LastRunView(**vars(last)),
        paused=pause is not None,
        pause_reason=None if pause is None else pause.reason,
        blocking_findings=NO_FINDINGS,
    )


def pipeline_graph(ctx: OperationContext, pipeline_code: str) -> PipelineGraph:
    metadata = _read(ctx)
    pipeline = metadata.pipeline(pipeline_code)
    tasks = _in_dependency_order(metadata, pipeline)
    return PipelineGraph(
        project=metadata.project_code,
        pipeline_code=pipeline.code,
        depends_on_pipelines=tuple(
            PipelineUpstreamView(d.upstream_pipeline_code, d.type, d.upstream_pipeline_active)
            for d in metadata.pipeline_dependencies_of(pipeline.pipeline_id)
        ),
        tasks=tuple(_graph_task(metadata, task) for task in tasks),
        blocking_findings=blocking_findings(metadata).get(pipeline.code, NO_FINDINGS),
    )


def _graph_task(metadata: ProjectMetadata, task: TaskRow) -> GraphTask:
    upstream = tuple(
        UpstreamView(
            task_code=d.upstream_task_code,
            pipeline_code=d.upstream_pipeline_code,
            type=d.type,
            cross_pipeline=d.upstream_pipeline_id != task.pipeline_id,
            active=d.upstream_task_active and d.upstream_pipeline_active,
        )
        for d in metadata.dependencies_of(task.task_id)
    )
    return GraphTask(task.code, task.handler, task.run_condition, task.required_count, upstream)


def pipeline_steps(ctx: OperationContext, pipeline_code: str) -> PipelineSteps:
    metadata = _read(ctx)
    pipeline = metadata.pipeline(pipeline_code)
    by_id = {t.task_id: t for t in metadata.tasks_of(pipeline.pipeline_id)}
    waves = tuple(
        Wave(
            number,
            tuple(
                Step(
                    node.code, by_id[node.task_id].handler, by_id[node.task_id].parameter("ACTION")
                )
                for node in wave
            ),
        )
        for number, wave in enumerate(_pipeline_graph(metadata, pipeline).waves(), start=1)
    )
    return PipelineSteps(project=metadata.project_code, pipeline_code=pipeline.code, waves=waves)


def _read(ctx: OperationContext) -> ProjectMetadata:
    with ctx.engine.read_only() as conn:
        return read_project_metadata(conn, ctx.project_code)


def _pipeline_graph(metadata: ProjectMetadata, pipeline: PipelineRow) -> DependencyGraph:
    """The pipeline's active tasks and the edges between them (waves ignore other pipelines)."""
    tasks = metadata.tasks_of(pipeline.pipeline_id)
    ids = {t.task_id for t in tasks}
    nodes = tuple(TaskNode(t.task_id, t.code, t.pipeline_id, pipeline.code) for t in tasks)
    edges = tuple(
        TaskEdge(d.task_id, d.upstream_task_id, d.type)
        for d in metadata.task_dependencies
        if d.task_id in ids and d.upstream_task_id in ids
    )
    return DependencyGraph(nodes, edges)


def _in_dependency_order(metadata: ProjectMetadata, pipeline: PipelineRow) -> list[TaskRow]:
    by_id = {t.task_id: t for t in metadata.tasks_of(pipeline.pipeline_id)}
    try:
        waves = _pipeline_graph(metadata, pipeline).waves()
    except MetadataError:
        return list(by_id.values())  # a cycle has no order; validate names it
    return [by_id[node.task_id] for wave in waves for node in wave]
