"""The frozen views of the catalog: what its pages show of pipelines, tasks, tables and rules.

Tasks are named ``pipeline.task`` (as the lineage names them) and tables by their lineage key
(``schema.table`` or ``database.schema.table``, unquoted parts folded), so that every mention of
one on any page leads to the same page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import ClassVar

from etl_craft.core.enums import DependencyType, RunStatus, TaskRunStatus
from etl_craft.lineage import LineageGraph
from etl_craft.operations.lineage import UntracedTask


@dataclass(frozen=True)
class RunEntry:
    run_id: int
    run_key: str
    trigger_kind: str
    run_date: date
    status: RunStatus
    started_at: datetime | None
    ended_at: datetime | None
    rows_written: int  # the sum over its task runs


@dataclass(frozen=True)
class TaskRunEntry:
    run_id: int
    status: TaskRunStatus
    rows_written: int | None
    source_count: int | None
    insert_count: int | None
    update_count: int | None
    delete_count: int | None
    started_at: datetime | None
    ended_at: datetime | None


@dataclass(frozen=True)
class Upstream:
    task: str  # pipeline.task
    type: DependencyType
    cross_pipeline: bool


@dataclass(frozen=True)
class PipelineUpstream:
    pipeline_code: str
    type: DependencyType


@dataclass(frozen=True)
class Parameter:
    name: str
    value: str | None  # masked when the name looks secret (S7.C)


@dataclass(frozen=True)
class PipelineEntry:
    code: str
    description: str | None
    schedule: str | None
    timezone: str
    next_ticks: tuple[datetime, ...]  # UTC; empty when manual only, paused or invalid
    schedule_problem: str | None
    paused: bool
    pause_reason: str | None
    tasks: tuple[str, ...]  # its active tasks, pipeline.task
    waits_for: tuple[PipelineUpstream, ...]
    parameters: tuple[Parameter, ...]
    runs: tuple[RunEntry, ...]  # newest first, the shown ones only


@dataclass(frozen=True)
class TaskEntry:
    name: str  # pipeline.task
    pipeline_code: str
    code: str
    handler: str
    description: str | None
    action: str | None
    keys: tuple[Parameter, ...]  # MERGE_KEY, MERGE_COMPARE_COLUMNS, ... as set
    sql: str | None  # with tokens replaced and secrets masked
    parameters: tuple[Parameter, ...]
    upstream: tuple[Upstream, ...]
    writes: str | None  # a table key
    reads: tuple[str, ...]
    checks: tuple[str, ...]  # tables its business rules check
    rules: tuple[str, ...]  # rule names, pipeline.task.rule
    script: str | None
    lineage_problem: str | None  # why its SELECT has no column lineage
    runs: tuple[TaskRunEntry, ...]  # newest first


@dataclass(frozen=True)
class ColumnEntry:
    name: str
    type: str | None  # from the warehouse, under --with-warehouse
    comment: str | None = None  # the warehouse's comment on it, under --with-warehouse


@dataclass(frozen=True)
class TableEntry:
    key: str
    database: str | None
    schema_name: str
    table: str
    columns: tuple[ColumnEntry, ...]
    writers: tuple[str, ...]  # tasks
    readers: tuple[str, ...]
    rules: tuple[str, ...]
    external_sources: tuple[str, ...]  # scripts writing it from outside the warehouse
    last_run: TaskRunEntry | None  # the newest shown run of a task writing it
    in_warehouse: bool | None  # None: the warehouse was not asked
    comment: str | None = None  # the warehouse's comment on the table


@dataclass(frozen=True)
class RuleEntry:
    name: str  # pipeline.task.rule
    code: str
    task: str
    rule_type: str
    table: str  # a table key
    key_columns: str
    rule_sql: str
    wave: int
    description: str | None


@dataclass(frozen=True)
class ScriptEntry:
    path: str  # under ingestion_scripts/
    tasks: tuple[str, ...]
    targets: tuple[str, ...]


@dataclass(frozen=True)
class Catalog:
    schema: ClassVar[str] = "etl-craft/catalog/1"
    project: str
    built_at: datetime
    with_warehouse: bool
    pipelines: tuple[PipelineEntry, ...]
    tasks: tuple[TaskEntry, ...]
    tables: tuple[TableEntry, ...]
    rules: tuple[RuleEntry, ...]
    scripts: tuple[ScriptEntry, ...]
    lineage: LineageGraph
    untraced: tuple[UntracedTask, ...]
