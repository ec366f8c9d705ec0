"""catalog: everything the catalog site shows, read in one snapshot with set queries (S6.C).

The Engine DB statements are the same whatever the number of pipelines and tasks: the metadata,
the stored lineage traces, the open pauses, the shown runs and their task runs, the
descriptions. Lineage reuses the stored traces and traces again only what changed. Parameter
values whose names look secret are masked, and so is any of their values in a task's SQL.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.cron import next_after
from etl_craft.core.redaction import SensitiveNames, mask_parameter
from etl_craft.core.time import utc_now
from etl_craft.enginedb.catalog_site import (
    Descriptions,
    ShownRun,
    ShownTaskRun,
    read_descriptions,
    read_shown_runs,
    read_shown_task_runs,
)
from etl_craft.enginedb.lineage import StoredTrace, stored_traces
from etl_craft.enginedb.metadata import (
    OpenPause,
    ProjectMetadata,
    read_open_pauses,
    read_project_metadata,
)
from etl_craft.handlers.secrets import sensitive_names
from etl_craft.lineage.build import source_tables
from etl_craft.lineage.sources import active_tasks, target_of
from etl_craft.operations.catalog.tables import read_warehouse_comments, table_entries
from etl_craft.operations.catalog.tasks import (
    TaskSources,
    rule_entries,
    script_entries,
    task_entries,
)
from etl_craft.operations.catalog.views import (
    Catalog,
    Parameter,
    PipelineEntry,
    PipelineUpstream,
    RunEntry,
    TaskRunEntry,
)
from etl_craft.operations.context import OperationContext
from etl_craft.operations.inspect import pause_of, pipeline_summary
from etl_craft.operations.lineage import (
    known_columns,
    read_warehouse_columns,
    sql_dialect,
    stored_lineage,
    untraced_tasks,
)
from etl_craft.warehouse.dialect import Column, Comments

RUNS_PER_PIPELINE = 10
NEXT_TICKS = 3


@dataclass(frozen=True)
class _Snapshot:
    metadata: ProjectMetadata
    stored: dict[int, StoredTrace]
    pauses: tuple[OpenPause, ...]
    runs: tuple[ShownRun, ...]
    task_runs: tuple[ShownTaskRun, ...]
    descriptions: Descriptions


def read_catalog(
    ctx: OperationContext,
    *,
    with_warehouse: bool = False,
    runs_per_pipeline: int = RUNS_PER_PIPELINE,
    now: datetime | None = None,
) -> Catalog:
    snapshot = _read(ctx, runs_per_pipeline)
    metadata, dialect = snapshot.metadata, sql_dialect(ctx)
    found: dict[str, tuple[Column, ...]] | None = None
    known: dict[str, tuple[str, ...]] = {}
    comments: dict[str, Comments] | None = None
    if with_warehouse and ctx.connector is not None:
        sources = source_tables(metadata, ctx.project, dialect, stored=snapshot.stored)
        targets = {target_of(t, dialect) for t in active_tasks(metadata)}
        found = read_warehouse_columns(
            ctx.connector.warehouse, sorted({*sources, *(t for t in targets if t)})
        )
        known = known_columns({t: found[t] for t in sources if t in found}, dialect)
        comments = read_warehouse_comments(ctx.connector.warehouse, sorted(found))
    graph = stored_lineage(ctx, metadata, snapshot.stored, known).graph
    names = sensitive_names(ctx.connector)
    task_runs = _task_runs_by_task(snapshot.task_runs)
    rules = rule_entries(metadata, snapshot.descriptions, dialect)
    secrets = ctx.connector.secrets if ctx.connector else frozenset()
    shown = TaskSources(ctx.project, names, secrets)
    tasks = task_entries(metadata, snapshot.descriptions, graph, rules, task_runs, shown)
    return Catalog(
        project=metadata.project_code,
        built_at=now or utc_now(),
        with_warehouse=found is not None,
        pipelines=_pipelines(ctx, snapshot, now or utc_now(), names),
        tasks=tasks,
        tables=table_entries(graph, tasks, rules, task_runs, found, comments),
        rules=rules,
        scripts=script_entries(tasks),
        lineage=graph,
        untraced=untraced_tasks(graph, None),
    )


def _read(ctx: OperationContext, runs_per_pipeline: int) -> _Snapshot:
    with ctx.engine.read() as conn:
        metadata = read_project_metadata(conn, ctx.project_code)
        project_id = metadata.project_id
        return _Snapshot(
            metadata=metadata,
            stored=stored_traces(conn, project_id),
            pauses=read_open_pauses(conn, project_id),
            runs=read_shown_runs(conn, project_id, runs_per_pipeline),
            task_runs=read_shown_task_runs(conn, project_id, runs_per_pipeline),
            descriptions=read_descriptions(conn, project_id),
        )


def _pipelines(
    ctx: OperationContext, snapshot: _Snapshot, now: datetime, names: SensitiveNames
) -> tuple[PipelineEntry, ...]:
    metadata = snapshot.metadata
    runs: dict[int, list[ShownRun]] = defaultdict(list)
    for run in snapshot.runs:
        runs[run.pipeline_id].append(run)
    rows: dict[int, int] = defaultdict(int)
    for task_run in snapshot.task_runs:
        rows[task_run.pipeline_run_id] += task_run.rows_written or 0
    tasks: dict[int, list[str]] = defaultdict(list)
    codes = {p.pipeline_id: p.code for p in metadata.pipelines}
    for task in active_tasks(metadata):
        tasks[task.pipeline_id].append(f"{codes[task.pipeline_id]}.{task.code}")
    waits: dict[int, list[PipelineUpstream]] = defaultdict(list)
    for dependency in metadata.pipeline_dependencies:
        upstream = PipelineUpstream(dependency.upstream_pipeline_code, dependency.type)
        waits[dependency.pipeline_id].append(upstream)
    parameters: dict[int, list[Parameter]] = defaultdict(list)
    for parameter in metadata.pipeline_parameters:
        masked = mask_parameter(parameter.name, parameter.value, names)
        parameters[parameter.pipeline_id].append(Parameter(parameter.name, masked))
    entries = []
    for pipeline in (p for p in metadata.pipelines if p.active):
        pause = pause_of(pipeline, snapshot.pauses)
        summary = pipeline_summary(pipeline, ctx.timezone, now, None, pause)
        entries.append(
            PipelineEntry(
                code=pipeline.code,
                description=pipeline.description,
                schedule=pipeline.run_schedule,
                timezone=summary.timezone,
                next_ticks=_ticks(pipeline.run_schedule, summary.next_run, summary.timezone),
                schedule_problem=summary.schedule_problem,
                paused=summary.paused,
                pause_reason=summary.pause_reason,
                tasks=tuple(tasks[pipeline.pipeline_id]),
                waits_for=tuple(waits[pipeline.pipeline_id]),
                parameters=tuple(parameters[pipeline.pipeline_id]),
                runs=tuple(_run(r, rows[r.pipeline_run_id]) for r in runs[pipeline.pipeline_id]),
            )
        )
    return tuple(entries)


def _ticks(schedule: str | None, first: datetime | None, zone: str) -> tuple[datetime, ...]:
    if schedule is None or first is None:
        return ()
    ticks = [first]
    while len(ticks) < NEXT_TICKS:
        ticks.append(next_after(schedule, ticks[-1], zone))
    return tuple(ticks)


def _run(run: ShownRun, rows_written: int) -> RunEntry:
    return RunEntry(
        run.pipeline_run_id,
        run.run_key,
        run.trigger_kind,
        run.run_date,
        run.status,
        run.started_at,
        run.ended_at,
        rows_written,
    )


def _task_runs_by_task(task_runs: Iterable[ShownTaskRun]) -> dict[int, tuple[TaskRunEntry, ...]]:
    found: dict[int, list[TaskRunEntry]] = defaultdict(list)
    for r in task_runs:
        found[r.task_id].append(
            TaskRunEntry(
                r.pipeline_run_id,
                r.status,
                r.rows_written,
                r.source_count,
                r.insert_count,
                r.update_count,
                r.delete_count,
                r.started_at,
                r.ended_at,
            )
        )
    return {task_id: tuple(entries) for task_id, entries in found.items()}
