"""What a spec plan's edits mean beyond the rows: the DAG edges that change, the columns
downstream of a task whose output changes, and the next ticks of a schedule that changes."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from itertools import count
from types import MappingProxyType
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from etl_craft.core.cron import cron_problem, next_after
from etl_craft.core.enums import EditKind
from etl_craft.enginedb.metadata import (
    BusinessRuleRow,
    PipelineParameterRow,
    PipelineRow,
    ProjectMetadata,
    TaskRow,
)
from etl_craft.lineage import Direction, LineageGraph
from etl_craft.operations.metadata.edit_checks import MetadataEdit
from etl_craft.operations.specs.diff import SWITCHED_OFF
from etl_craft.specs.model import PipelineSpec, RuleSpec

NEXT_TICKS = 5
# A dependency change adds or removes an edge; a task's own objects change what it writes.
_EDGE_KINDS = (EditKind.TASK_DEPENDENCY, EditKind.PIPELINE_DEPENDENCY)
_OUTPUT_KINDS = (EditKind.TASK, EditKind.TASK_PARAMETER, EditKind.BUSINESS_RULE)


@dataclass(frozen=True)
class EdgeChange:
    """A task of the DAG added or removed (``upstream`` None), or an edge of it."""

    change: str  # added, removed, changed
    task: str  # pipeline.task, or the pipeline for a pipeline dependency
    upstream: str | None
    type_before: str | None
    type_after: str | None


@dataclass(frozen=True)
class AffectedTask:
    task: str  # pipeline.task
    reason: str
    target: str | None
    columns: tuple[str, ...]  # table.column: what the task writes, then every column downstream


@dataclass(frozen=True)
class PipelineTicks:
    pipeline: str
    schedule_before: str | None
    schedule_after: str | None
    timezone: str  # the zone the schedule's ticks are read in
    before: tuple[datetime, ...]  # the next ticks of the schedule the Engine DB holds
    after: tuple[datetime, ...]  # the next ticks once the plan is applied
    problem: str | None = None  # why a schedule has no ticks


def spec_metadata(metadata: ProjectMetadata, specs: tuple[PipelineSpec, ...]) -> ProjectMetadata:
    """The project's metadata with the specs' pipelines, their parameters (which their SQL's
    tokens read) and tasks as the specs describe them.

    Existing objects keep their ids (so stored lineage traces apply); new ones get negative
    ids, which no Engine DB row has.
    """
    codes = {spec.code for spec in specs}
    fresh = count(-1, -1)
    pipelines = [p for p in metadata.pipelines if p.code not in codes or not p.active]
    kept = {p.pipeline_id for p in pipelines}
    tasks = [t for t in metadata.tasks if t.pipeline_id in kept]
    parameters = [p for p in metadata.pipeline_parameters if p.pipeline_id in kept]
    kept_tasks = {t.task_id for t in tasks}
    rules = [r for r in metadata.business_rules if r.task_id in kept_tasks]
    for spec in specs:
        row = next((p for p in metadata.pipelines if p.code == spec.code and p.active), None)
        pipeline_id = row.pipeline_id if row else next(fresh)
        pipelines.append(_pipeline_row(spec, pipeline_id))
        parameters += [
            PipelineParameterRow(pipeline_id, p.name, p.value, p.type) for p in spec.parameters
        ]
        known = {t.code: t.task_id for t in metadata.tasks if t.pipeline_id == pipeline_id}
        ids = {task.code: known.get(task.code) or next(fresh) for task in spec.tasks}
        rules += [
            _rule_row(rule, ids[task.code], next(fresh))
            for task in spec.tasks
            for rule in task.rules
            if rule.active
        ]
        tasks += [
            TaskRow(
                task_id=ids[task.code],
                pipeline_id=pipeline_id,
                code=task.code,
                handler=task.handler,
                run_condition=task.run_condition,
                required_count=task.required_count,
                active=task.active and spec.active,
                parameters=MappingProxyType(dict(task.parameters)),
            )
            for task in spec.tasks
        ]
    return replace(
        metadata,
        pipelines=tuple(pipelines),
        pipeline_parameters=tuple(parameters),
        tasks=tuple(tasks),
        business_rules=tuple(rules),
    )


def _rule_row(rule: RuleSpec, task_id: int, rule_id: int) -> BusinessRuleRow:
    return BusinessRuleRow(
        rule_id,
        task_id,
        rule.code,
        rule.rule_type,
        rule.target_table,
        rule.key_columns,
        rule.rule_sql,
        rule.wave,
    )


def _pipeline_row(spec: PipelineSpec, pipeline_id: int) -> PipelineRow:
    settings = spec.settings
    return PipelineRow(
        pipeline_id=pipeline_id,
        code=spec.code,
        description=_text(settings.get("DESCRIPTION")),
        run_schedule=_text(settings.get("RUN_SCHEDULE")),
        schedule_timezone=_text(settings.get("SCHEDULE_TIMEZONE")),
        active=spec.active,
    )


def dag_changes(edits: tuple[MetadataEdit, ...]) -> tuple[EdgeChange, ...]:
    """Tasks added and removed, then the edges added, removed and changed."""
    nodes = [
        EdgeChange("added" if edit.verb == "add" else "removed", _task_name(edit), None, None, None)
        for edit in edits
        if edit.kind is EditKind.TASK and (edit.verb == "add" or edit.after == SWITCHED_OFF)
    ]
    return (*nodes, *(_edge(edit) for edit in edits if edit.kind in _EDGE_KINDS))


def _edge(edit: MetadataEdit) -> EdgeChange:
    key = edit.key
    task = f"{key['pipeline']}.{key['task']}" if "task" in key else key["pipeline"]
    upstream = key["upstream_pipeline"]
    if "upstream_task" in key:
        upstream += f".{key['upstream_task']}"
    before = _text((edit.before or {}).get("DEPENDENCY_TYPE"))
    after = _text((edit.after or {}).get("DEPENDENCY_TYPE"))
    if edit.verb == "add":
        return EdgeChange("added", task, upstream, None, after or "SUCCESS")
    if (edit.after or {}).get("ACTIVE_FLAG") == "N" or edit.after is None:
        return EdgeChange("removed", task, upstream, before, None)
    return EdgeChange("changed", task, upstream, before, after)


def affected_tasks(
    edits: tuple[MetadataEdit, ...],
    graph: LineageGraph,
    after: ProjectMetadata,
    changed_sql: set[int],
) -> tuple[AffectedTask, ...]:
    """Each task whose output may change, with the columns it writes and those downstream."""
    reasons: dict[str, str] = {}
    # A new task changes no output that exists; its rows and inferred edges say what it does.
    new = {_task_name(e) for e in edits if e.kind is EditKind.TASK and e.verb == "add"}
    for edit in edits:
        if edit.kind in _OUTPUT_KINDS and edit.verb != "remove" and _task_name(edit) not in new:
            reasons.setdefault(_task_name(edit), f"its {edit.spec.label} rows change")
    codes = {p.pipeline_id: p.code for p in after.pipelines}
    for task in after.tasks:
        if task.task_id in changed_sql:
            reasons[f"{codes[task.pipeline_id]}.{task.code}"] = "its SQL changed"
    found = []
    for lineage in graph.tasks:
        reason = reasons.get(lineage.name)
        if reason is not None:
            found.append(
                AffectedTask(
                    lineage.name, reason, lineage.target, downstream_columns(graph, lineage.name)
                )
            )
    return tuple(found)


def _task_name(edit: MetadataEdit) -> str:
    return f"{edit.key['pipeline']}.{edit.key['task']}"


def downstream_columns(graph: LineageGraph, name: str) -> tuple[str, ...]:
    task = next(t for t in graph.tasks if t.name == name)
    if task.target is None or not task.writes_columns:
        return ()
    columns: dict[str, None] = {}
    for column in task.columns or ():
        columns[f"{task.target}.{column.name}"] = None
        for edge in graph.walk_column(task.target, column.name, Direction.DOWNSTREAM):
            columns[f"{edge.target_table}.{edge.target_column}"] = None
    return tuple(columns)


def schedule_ticks(
    edits: tuple[MetadataEdit, ...],
    metadata: ProjectMetadata,
    after: ProjectMetadata,
    now: datetime,
) -> tuple[PipelineTicks, ...]:
    """The next ticks, before and after, of each pipeline whose schedule or zone changes."""
    scheduling = {"RUN_SCHEDULE", "SCHEDULE_TIMEZONE", "ACTIVE_FLAG"}
    touched = [
        edit.key["pipeline"]
        for edit in edits
        if edit.kind is EditKind.PIPELINE and scheduling & set((edit.after or {}).keys())
    ]
    return tuple(_ticks(code, metadata, after, now) for code in dict.fromkeys(touched))


def _ticks(
    code: str, metadata: ProjectMetadata, after: ProjectMetadata, now: datetime
) -> PipelineTicks:
    old = next((p for p in metadata.pipelines if p.code == code and p.active), None)
    new = next((p for p in after.pipelines if p.code == code and p.active), None)
    shown = new or old
    zone_name = (shown.schedule_timezone if shown else None) or metadata.timezone
    problems: list[str] = []
    before = _next(old, metadata.timezone, now, problems)
    later = _next(new, metadata.timezone, now, problems)
    return PipelineTicks(
        code,
        old.run_schedule if old else None,
        new.run_schedule if new else None,
        zone_name,
        before,
        later,
        "; ".join(problems) or None,
    )


def _next(
    pipeline: PipelineRow | None, project_zone: str, now: datetime, problems: list[str]
) -> tuple[datetime, ...]:
    if pipeline is None or pipeline.run_schedule is None:
        return ()
    problem = cron_problem(pipeline.run_schedule)
    zone_name = pipeline.schedule_timezone or project_zone
    try:
        zone = ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError):
        problem = problem or f"time zone {zone_name!r} is unknown; expected an IANA name"
    if problem is not None:
        problems.append(f"schedule {pipeline.run_schedule!r}: {problem}")
        return ()
    ticks: list[datetime] = []
    instant = now
    for _ in range(NEXT_TICKS):
        instant = next_after(pipeline.run_schedule, instant, zone)
        ticks.append(instant.astimezone(zone))
    return tuple(ticks)


def _text(value: object) -> str | None:
    return None if value is None else str(value)
