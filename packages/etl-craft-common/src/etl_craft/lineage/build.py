"""Build the project's lineage graph, tracing again only the SELECTs whose inputs changed.

A trace depends on the SELECT after tokens, its dialect, the sqlglot version and the known
columns of the tables it reads. The known columns of a table come from the warehouse when
asked, and from the SELECTs of the tasks that write it: writers are traced before readers,
so a reader's ``SELECT *`` of a table another task writes is resolved.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import version

from sqlglot.errors import SqlglotError

from etl_craft.config.project import Project
from etl_craft.core.enums import Handler
from etl_craft.enginedb.lineage import StoredTrace
from etl_craft.enginedb.metadata import ProjectMetadata, TaskRow
from etl_craft.lineage.graph import LineageGraph, TaskLineage
from etl_craft.lineage.model import Trace
from etl_craft.lineage.sources import (
    TaskSql,
    active_tasks,
    has_select,
    history_targets,
    managed_columns,
    name_key,
    rule_reads,
    target_of,
    task_sql,
)
from etl_craft.lineage.trace import first_line, tables_read, trace_select

# A new sqlglot may trace the same SELECT differently, so its version is part of every hash.
SQLGLOT_VERSION = version("sqlglot")


@dataclass(frozen=True)
class LineageBuild:
    graph: LineageGraph
    traced: int  # SELECTs sqlglot parsed in this build
    reused: int  # SELECTs whose stored trace still held
    changed: tuple[StoredTrace, ...]  # traces to store: new or different from the stored ones


@dataclass
class _Pending:
    source: TaskSql
    sql_hash: str
    reads: tuple[str, ...]
    parsed: bool
    problem: str | None = None


def build_lineage(
    metadata: ProjectMetadata,
    project: Project | None,
    dialect: str,
    *,
    stored: Mapping[int, StoredTrace] | None = None,
    warehouse_columns: Mapping[str, tuple[str, ...]] | None = None,
) -> LineageBuild:
    stored = stored or {}
    known: dict[str, tuple[str, ...]] = dict(warehouse_columns or {})
    codes = {p.pipeline_id: p.code for p in metadata.pipelines}
    tasks = active_tasks(metadata)
    history = history_targets(tasks, dialect)
    pending = [
        _pending(task_sql(t, project, metadata, dialect), dialect, stored)
        for t in tasks
        if has_select(t)
    ]
    lineages: dict[int, TaskLineage] = {}
    changed: list[StoredTrace] = []
    traced = reused = 0
    for item in _writers_first(pending, dialect):
        task = item.source.task
        trace, record = _trace(item, dialect, known, stored.get(task.task_id))
        traced += 1 if item.parsed or record is not None else 0
        reused += 1 if not item.parsed and record is None else 0
        if record is not None:
            changed.append(record)
        target = target_of(task, dialect)
        if target is not None and trace.columns is not None:
            merged = dict.fromkeys(known.get(target, ()))
            merged.update(dict.fromkeys(c.name for c in trace.columns))
            merged.update(dict.fromkeys(managed_columns(target in history, dialect)))
            known[target] = tuple(merged)
        lineages[task.task_id] = TaskLineage(
            codes[task.pipeline_id],
            task.code,
            task.task_id,
            task.handler.value,
            target,
            trace.reads,
            trace.columns,
            trace.problem,
            action=task.parameter("ACTION"),
        )
    for task in tasks:
        if task.task_id not in lineages and not has_select(task):
            lineages[task.task_id] = _other(task, codes[task.pipeline_id], metadata, dialect)
    ordered = tuple(lineages[t.task_id] for t in tasks if t.task_id in lineages)
    return LineageBuild(LineageGraph(ordered), traced, reused, tuple(changed))


def source_tables(
    metadata: ProjectMetadata,
    project: Project | None,
    dialect: str,
    *,
    stored: Mapping[int, StoredTrace] | None = None,
) -> tuple[str, ...]:
    """The tables SELECTs read that no SQL task writes: the warehouse alone knows their columns."""
    stored = stored or {}
    tasks = [t for t in active_tasks(metadata) if has_select(t)]
    pending = [_pending(task_sql(t, project, metadata, dialect), dialect, stored) for t in tasks]
    written = {target_of(t, dialect) for t in tasks}
    return tuple(sorted({r for item in pending for r in item.reads} - written))


def _pending(source: TaskSql, dialect: str, stored: Mapping[int, StoredTrace]) -> _Pending:
    text = source.sql or ""
    sql_hash = _hash(dialect, SQLGLOT_VERSION, text)
    previous = stored.get(source.task.task_id)
    if source.sql is None:
        return _Pending(source, sql_hash, (), False, source.problem)
    if previous is not None and previous.sql_hash == sql_hash:
        return _Pending(source, sql_hash, Trace.from_json(previous.trace).reads, False)
    try:
        return _Pending(source, sql_hash, tables_read(text, dialect), True)
    except SqlglotError as error:
        return _Pending(source, sql_hash, (), True, f"sqlglot can't parse it: {first_line(error)}")


def _trace(
    item: _Pending,
    dialect: str,
    known: Mapping[str, tuple[str, ...]],
    previous: StoredTrace | None,
) -> tuple[Trace, StoredTrace | None]:
    """The task's trace, and the record to store when it was traced anew."""
    if item.source.sql is None:
        return Trace((), None, item.problem), None
    inputs = {table: known[table] for table in item.reads if table in known}
    input_hash = _hash(item.sql_hash, json.dumps(inputs, sort_keys=True))
    if previous is not None and previous.input_hash == input_hash:
        return Trace.from_json(previous.trace), None
    trace = trace_select(item.source.sql, dialect, inputs)
    record = StoredTrace(item.source.task.task_id, item.sql_hash, input_hash, trace.to_json())
    return trace, record


def _writers_first(pending: list[_Pending], dialect: str) -> list[_Pending]:
    """Writers of a table before its readers; tasks in a cycle keep their metadata order."""
    writers: dict[str, set[int]] = {}
    for item in pending:
        target = target_of(item.source.task, dialect)
        if target is not None:
            writers.setdefault(target, set()).add(item.source.task.task_id)
    waits = {
        item.source.task.task_id: {
            w
            for table in item.reads
            for w in writers.get(table, ())
            if w != item.source.task.task_id
        }
        for item in pending
    }
    ordered: list[_Pending] = []
    remaining = list(pending)
    while remaining:
        done = {i.source.task.task_id for i in ordered}
        ready = [i for i in remaining if waits[i.source.task.task_id] <= done] or remaining[:1]
        ordered += ready
        remaining = [i for i in remaining if i not in ready]
    return ordered


def _other(
    task: TaskRow, pipeline_code: str, metadata: ProjectMetadata, dialect: str
) -> TaskLineage:
    """A task without a SELECT: a script writes its target, a rules task reads its table and
    whatever its rules' SQL reads."""
    reads: tuple[str, ...] = ()
    external = problem = None
    if task.handler is Handler.BUSINESS_RULES:
        table = name_key(task.parameter("TARGET_TABLE"), dialect)
        ruled = rule_reads(task, metadata, dialect)
        reads = tuple(dict.fromkeys([*([table] if table else []), *ruled.reads]))
        problem = ruled.problem
    elif task.handler is Handler.PYTHON and task.parameter("SCRIPT"):
        external = f"script {task.parameter('SCRIPT')}"
    elif task.handler is Handler.PYTHON and task.parameter("FILE_PATTERN"):
        external = f"files {task.parameter('FILE_PATTERN')}"
    return TaskLineage(
        pipeline_code,
        task.code,
        task.task_id,
        task.handler.value,
        target_of(task, dialect) if task.handler is not Handler.SQL else None,
        reads,
        None,
        problem,
        external_source=external,
        action=task.parameter("ACTION"),
    )


def _hash(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()
