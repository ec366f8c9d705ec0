"""validate's check of what each SELECT reads: tables and columns that exist somewhere.

A table a SELECT reads must be the target of a task or a table of the warehouse; a column it
takes from a table must be one the warehouse, the table's writers or etl-craft itself give it.
Judged only when the warehouse answers, since a source table lives there alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.core.errors import WarehouseError
from etl_craft.enginedb.metadata import TaskRow
from etl_craft.lineage.build import build_lineage
from etl_craft.lineage.graph import LineageGraph, TaskLineage
from etl_craft.lineage.model import ROWS
from etl_craft.lineage.sources import task_sql
from etl_craft.operations.lineage import known_columns, read_warehouse_columns
from etl_craft.operations.validate.findings import Finding, Subject
from etl_craft.warehouse.audit import MANAGED_NAMES
from etl_craft.warehouse.kinds import reach

REACH_SECONDS = 5
_MANAGED = frozenset(name.lower() for name in MANAGED_NAMES)


def check_reads(subject: Subject) -> list[Finding]:
    if subject.warehouse is None or not _answers(subject.warehouse):
        return []
    graph = build_lineage(subject.metadata, subject.project, subject.dialect).graph
    try:
        found = read_warehouse_columns(subject.warehouse, graph.tables())
    except WarehouseError:
        return []
    columns = _known(graph, known_columns(found, subject.dialect))
    rows = {t.task_id: t for t in subject.metadata.tasks}
    findings: list[Finding] = []
    for task in graph.tasks:
        row = rows[task.task_id]
        if subject.in_scope(row.pipeline_id) and task.handler == "SQL":
            findings += _task(subject, row, _Reads(task, columns, _Source.of(subject, row)))
    return findings


def _answers(warehouse: Warehouse) -> bool:
    # A DuckDB file no run has made yet holds nothing to compare with; connecting creates it.
    if warehouse.type is WarehouseType.DUCKDB and not Path(warehouse.path or "").is_file():
        return False
    try:
        reached = reach(warehouse, REACH_SECONDS)
    except WarehouseError:
        return False  # doctor reports it; without the warehouse nothing here can be told
    # A run holding the DuckDB file would hold validate up until its task ends.
    return not reached.busy


def _known(
    graph: LineageGraph, in_warehouse: Mapping[str, tuple[str, ...]]
) -> dict[str, frozenset[str] | None]:
    """Each table's column names (lower case), or None where a writer's output is unknown."""
    known: dict[str, frozenset[str] | None] = {
        table: frozenset(c.lower() for c in names) for table, names in in_warehouse.items()
    }
    for table in graph.tables():
        writers = graph.writers(table)
        if not writers:
            continue
        if any(w.columns is None or not w.writes_columns for w in writers):
            known[table] = None
            continue
        given = {c.name.lower() for w in writers for c in w.columns or ()}
        known[table] = frozenset(given | _MANAGED | (known.get(table) or frozenset()))
    return known


@dataclass(frozen=True)
class _Source:
    label: str  # sql_files/orders.sql, or SOURCE_SQL
    parameter: str
    text: str

    @classmethod
    def of(cls, subject: Subject, row: TaskRow) -> _Source:
        sql = task_sql(row, subject.project, subject.metadata, subject.dialect).sql or ""
        file = row.parameter("SOURCE_SQL_FILE")
        if row.parameter("SOURCE_SQL") is not None or file is None:
            return cls("SOURCE_SQL", "SOURCE_SQL", sql)
        return cls(f"sql_files/{file}", "SOURCE_SQL_FILE", sql)

    def line_of(self, name: str) -> int:
        pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)
        lines = self.text.splitlines()
        return next((n for n, line in enumerate(lines, 1) if pattern.search(line)), 1)


@dataclass(frozen=True)
class _Reads:
    task: TaskLineage
    columns: Mapping[str, frozenset[str] | None]
    source: _Source


def _task(subject: Subject, row: TaskRow, reads: _Reads) -> Iterator[Finding]:
    source, columns = reads.source, reads.columns
    for table in reads.task.reads:
        if table not in columns:
            line = source.line_of(table.rsplit(".", 1)[-1])
            yield subject.fail(
                "missing-table",
                row,
                f"the SELECT in {source.label} (line {line}) reads {table}, which is neither in "
                "the warehouse nor the target of any task; expected a table that exists when "
                "the task runs",
                f"fix the table's name in {source.label}, create it in the warehouse, or add the "
                "task that writes it",
                source.parameter,
            )
    for column, table in _taken(reads.task):
        names = columns.get(table)
        if names is not None and column.lower() not in names:
            line = source.line_of(column)
            yield subject.fail(
                "missing-column",
                row,
                f"the SELECT in {source.label} (line {line}) takes {column} from {table}, which "
                f"has no such column (it has {', '.join(sorted(names - _MANAGED)) or 'none'})",
                f"fix the column's name in {source.label}",
                source.parameter,
            )


def _taken(task: TaskLineage) -> list[tuple[str, str]]:
    """Each (column, table) the SELECT's output takes, once, in order."""
    pairs = {
        (source.column, source.table): None
        for column in task.columns or ()
        for source in column.sources
        if source.column != ROWS
    }
    return list(pairs)
