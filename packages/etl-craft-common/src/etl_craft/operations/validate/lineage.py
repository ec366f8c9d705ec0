"""validate's checks that need lineage: reads without a dependency, keys the SELECT lacks.

The lineage is built in memory here, never stored: validate reads the Engine DB only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from etl_craft.enginedb.metadata import ProjectMetadata, TaskRow
from etl_craft.lineage.build import build_lineage
from etl_craft.lineage.graph import LineageGraph, TaskLineage
from etl_craft.lineage.slices import Slices
from etl_craft.lineage.sources import name_key
from etl_craft.operations.validate.findings import Finding, Subject
from etl_craft.warehouse.audit import MANAGED_NAMES

_KEYED = ("SCD1_MERGE", "SCD2_MERGE", "DELETE_ROWS")
_MANAGED = frozenset(name.lower() for name in MANAGED_NAMES)


def check_lineage(subject: Subject) -> list[Finding]:
    graph = build_lineage(subject.metadata, subject.project, subject.dialect).graph
    rows = {t.task_id: t for t in subject.metadata.tasks}
    return [
        *_unordered_reads(subject, graph, rows),
        *_missing_keys(subject, graph, rows),
        *_missing_rule_keys(subject, graph, rows),
    ]


def _unordered_reads(
    subject: Subject, graph: LineageGraph, rows: dict[int, TaskRow]
) -> Iterator[Finding]:
    upstream = _Upstream(subject.metadata)
    slices = Slices(subject.metadata, subject.project, subject.dialect)
    for reader in graph.tasks:
        row = rows[reader.task_id]
        if not subject.in_scope(row.pipeline_id):
            continue
        for table in reader.reads:
            for writer in graph.writers(table):
                if writer.task_id == reader.task_id or upstream.ordered(reader, writer):
                    continue
                if slices.apart(reader.task_id, writer.task_id, table):
                    continue  # each reads and writes its own rows of the table
                yield subject.fail(
                    "unordered-read",
                    row,
                    f"it reads {table}, which task {writer.name} writes, but neither task "
                    "depends on the other; expected a dependency path between them, else it "
                    "reads whatever the last run left",
                    f"add a dependency of {reader.name} on {writer.name} in CFG_TASK_DEPENDENCY "
                    "(or of their pipelines in CFG_PIPELINE_DEPENDENCY)"
                    + _slice_remedy(slices, reader.task_id, writer.task_id, table),
                )


def _slice_remedy(slices: Slices, reader: int, writer: int, table: str) -> str:
    theirs, mine = slices.of(writer, table), slices.of(reader, table)
    if theirs is None:
        return ""
    if mine is None or mine.column != theirs.column:
        return (
            f"; or, if it reads only its own slice of {table}, declare it as {theirs.column} "
            "with SLICE_COLUMN and SLICE_VALUE (slice: in a pipeline spec)"
        )
    if mine.same_rows(theirs):
        return f"; both declare the slice {mine.describe()}"
    return (
        f"; it declares the slice {mine.describe()}, but a read of {table} in its SQL does "
        f"not require {mine.column} = {mine.value!r}: filter every read of {table} on it"
    )


class _Upstream:
    """Which tasks wait for which: task dependencies, and pipelines waiting for pipelines."""

    def __init__(self, metadata: ProjectMetadata) -> None:
        active = {p.pipeline_id for p in metadata.pipelines if p.active}
        self._tasks: dict[int, set[int]] = defaultdict(set)
        for d in metadata.task_dependencies:
            if d.upstream_task_active and d.upstream_pipeline_active:
                self._tasks[d.task_id].add(d.upstream_task_id)
        self._pipelines: dict[int, set[int]] = defaultdict(set)
        for p in metadata.pipeline_dependencies:
            if p.upstream_pipeline_id in active:
                self._pipelines[p.pipeline_id].add(p.upstream_pipeline_id)
        self._members: dict[int, set[int]] = defaultdict(set)
        self._pipeline_of: dict[int, int] = {}
        for task in metadata.tasks:
            if task.active:
                self._members[task.pipeline_id].add(task.task_id)
                self._pipeline_of[task.task_id] = task.pipeline_id

    def ordered(self, a: TaskLineage, b: TaskLineage) -> bool:
        return self._reaches(a.task_id, b.task_id) or self._reaches(b.task_id, a.task_id)

    def _reaches(self, start: int, goal: int) -> bool:
        seen, frontier = {start}, [start]
        while frontier:
            task = frontier.pop()
            step = set(self._tasks[task])
            for pipeline in self._pipelines[self._pipeline_of.get(task, -1)]:
                step |= self._members[pipeline]
            if goal in step:
                return True
            frontier += [t for t in step if t not in seen]
            seen |= step
        return False


def _missing_keys(
    subject: Subject, graph: LineageGraph, rows: dict[int, TaskRow]
) -> Iterator[Finding]:
    for task in graph.tasks:
        row = rows[task.task_id]
        if (
            task.columns is None
            or task.action not in _KEYED
            or not subject.in_scope(row.pipeline_id)
        ):
            continue
        output = {c.name.lower() for c in task.columns}
        keys = [k.strip() for k in (row.parameter("MERGE_KEY") or "").split(",") if k.strip()]
        missing = [k for k in keys if k.lower() not in output]
        if missing:
            yield subject.fail(
                "key-column",
                row,
                f"MERGE_KEY names {', '.join(missing)}, which the SELECT does not return (it "
                f"returns {', '.join(c.name for c in task.columns)}); expected every key "
                f"column in the output of a {task.action}",
                f"add {', '.join(missing)} to the SELECT, or fix MERGE_KEY",
                "MERGE_KEY",
            )


def _missing_rule_keys(
    subject: Subject, graph: LineageGraph, rows: dict[int, TaskRow]
) -> Iterator[Finding]:
    for rule in subject.metadata.business_rules:
        row = rows.get(rule.task_id)
        if row is None or not row.active or not subject.in_scope(row.pipeline_id):
            continue
        table = name_key(rule.target_table, subject.dialect)
        writers = [w for w in graph.writers(table or "") if w.writes_columns]
        if not writers or any(w.columns is None for w in writers):
            continue  # the table's columns are not all known without the warehouse
        output = {c.lower() for c in graph.columns_of(table or "")} | _MANAGED
        keys = [k.strip() for k in rule.key_columns.split(",") if k.strip()]
        missing = [k for k in keys if k.lower() not in output]
        if missing:
            names = ", ".join(w.name for w in writers)
            yield subject.fail(
                "key-column",
                row,
                f"KEY_COLUMNS of rule {rule.code} names {', '.join(missing)}, which no SELECT "
                f"writing {table} returns (written by {names}); expected columns of the table",
                f"fix KEY_COLUMNS of rule {rule.code} in CFG_BUSINESS_RULES, or add "
                f"{', '.join(missing)} to the SELECT of {names}",
            )
