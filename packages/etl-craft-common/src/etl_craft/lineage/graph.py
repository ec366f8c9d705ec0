"""The project's lineage as one graph: tables joined by the tasks that read and write them.

Tasks are stitched across pipelines by TARGET_OBJECT. A column is addressed by its table's
key and its name; a column edge runs from a source column to the column a task writes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from enum import StrEnum

from etl_craft.lineage.model import ROWS, EdgeKind, OutputColumn


class Direction(StrEnum):
    UPSTREAM = "upstream"
    DOWNSTREAM = "downstream"


@dataclass(frozen=True)
class TaskLineage:
    pipeline_code: str
    task_code: str
    task_id: int
    handler: str
    target: str | None  # the table key of TARGET_OBJECT
    reads: tuple[str, ...]
    columns: tuple[OutputColumn, ...] | None  # None: not traced (a script, or a problem)
    problem: str | None = None  # why the SELECT could not be traced
    external_source: str | None = None  # a script's source, outside the warehouse
    action: str | None = None  # a SQL task's ACTION

    @property
    def writes_columns(self) -> bool:
        # DELETE_ROWS's SELECT names the keys to delete; it puts no values in the target.
        return self.target is not None and self.action != "DELETE_ROWS"

    @property
    def name(self) -> str:
        return f"{self.pipeline_code}.{self.task_code}"


@dataclass(frozen=True)
class TableEdge:
    source: str  # a table key, or a script's external source
    target: str
    task: str  # pipeline.task


@dataclass(frozen=True)
class ColumnEdge:
    source_table: str
    source_column: str
    target_table: str
    target_column: str
    kind: EdgeKind
    task: str
    depth: int = 1  # hops from the column a walk started at


@dataclass(frozen=True)
class LineageGraph:
    tasks: tuple[TaskLineage, ...]

    def writers(self, table: str) -> tuple[TaskLineage, ...]:
        return tuple(t for t in self.tasks if t.target == table)

    def readers(self, table: str) -> tuple[TaskLineage, ...]:
        return tuple(t for t in self.tasks if table in t.reads)

    def tables(self) -> tuple[str, ...]:
        found = {t.target for t in self.tasks if t.target} | {
            r for t in self.tasks for r in t.reads
        }
        return tuple(sorted(found))

    def columns_of(self, table: str) -> tuple[str, ...]:
        """The columns the table's writers give it, then those its readers use, in order."""
        names: dict[str, None] = {}
        for task in self.writers(table):
            names.update((c.name, None) for c in task.columns or ())
        for edge in self.column_edges():
            # `*` stands for the rows COUNT(*) reads, not a column of the table.
            if edge.source_table == table and edge.source_column != ROWS:
                names.setdefault(edge.source_column, None)
        return tuple(names)

    def untraced(self) -> tuple[TaskLineage, ...]:
        return tuple(t for t in self.tasks if t.problem is not None)

    def table_edges(self) -> tuple[TableEdge, ...]:
        edges: list[TableEdge] = []
        for task in self.tasks:
            if task.target is None:
                continue
            if task.external_source is not None:
                edges.append(TableEdge(task.external_source, task.target, task.name))
            edges += [TableEdge(read, task.target, task.name) for read in task.reads]
        return tuple(edges)

    def column_edges(self) -> tuple[ColumnEdge, ...]:
        return tuple(
            ColumnEdge(s.table, s.column, task.target, column.name, s.kind, task.name)
            for task in self.tasks
            if task.target is not None and task.writes_columns
            for column in task.columns or ()
            for s in column.sources
        )

    def walk_tables(
        self, table: str, direction: Direction, depth: int | None = None
    ) -> tuple[TableEdge, ...]:
        ends = _ends(direction)
        index: dict[str, list[TableEdge]] = defaultdict(list)
        for edge in self.table_edges():
            index[getattr(edge, ends[0])].append(edge)
        found: list[TableEdge] = []
        frontier, seen, level = [table], {table}, 0
        while frontier and (depth is None or level < depth):
            level += 1
            step = [edge for name in frontier for edge in index[name]]
            found += [e for e in step if e not in found]
            frontier = [n for n in {getattr(e, ends[1]) for e in step} if n not in seen]
            seen.update(frontier)
        return tuple(found)

    def walk_column(
        self, table: str, column: str, direction: Direction, depth: int | None = None
    ) -> tuple[ColumnEdge, ...]:
        upstream = direction is Direction.UPSTREAM
        index: dict[tuple[str, str], list[ColumnEdge]] = defaultdict(list)
        for edge in self.column_edges():
            key = (
                (edge.target_table, edge.target_column)
                if upstream
                else (
                    edge.source_table,
                    edge.source_column,
                )
            )
            index[(key[0], key[1].lower())].append(edge)
        found: list[ColumnEdge] = []
        frontier, seen, level = [(table, column.lower())], {(table, column.lower())}, 0
        while frontier and (depth is None or level < depth):
            level += 1
            step = [edge for key in frontier for edge in index[key]]
            found += [_at(e, level) for e in step]
            ends = {
                (e.source_table, e.source_column.lower())
                if upstream
                else (e.target_table, e.target_column.lower())
                for e in step
            }
            frontier = [key for key in ends if key not in seen]
            seen.update(frontier)
        return tuple(found)


def _ends(direction: Direction) -> tuple[str, str]:
    return ("target", "source") if direction is Direction.UPSTREAM else ("source", "target")


def _at(edge: ColumnEdge, depth: int) -> ColumnEdge:
    return ColumnEdge(
        edge.source_table,
        edge.source_column,
        edge.target_table,
        edge.target_column,
        edge.kind,
        edge.task,
        depth,
    )
