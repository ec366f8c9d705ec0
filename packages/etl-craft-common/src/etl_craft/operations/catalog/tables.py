"""The catalog's tables: every TARGET_OBJECT and every table a SELECT or a rule reads.

Indexes are built once for the whole graph: a table's writers, readers and columns are looked
up, never searched for, so a build of thousands of tables stays linear.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from etl_craft.config.sections import Warehouse
from etl_craft.lineage import LineageGraph
from etl_craft.lineage.model import ROWS
from etl_craft.operations.catalog.views import (
    ColumnEntry,
    RuleEntry,
    TableEntry,
    TaskEntry,
    TaskRunEntry,
)
from etl_craft.warehouse import TargetObject, connect
from etl_craft.warehouse.dialect import Column, Comments

NO_COMMENTS = Comments(None, {})


def table_entries(
    graph: LineageGraph,
    tasks: tuple[TaskEntry, ...],
    rules: tuple[RuleEntry, ...],
    task_runs: Mapping[int, tuple[TaskRunEntry, ...]],
    warehouse: Mapping[str, tuple[Column, ...]] | None,
    comments: Mapping[str, Comments] | None = None,
) -> tuple[TableEntry, ...]:
    writers: dict[str, list[str]] = defaultdict(list)
    readers: dict[str, list[str]] = defaultdict(list)
    external: dict[str, list[str]] = defaultdict(list)
    runs: dict[str, list[TaskRunEntry]] = defaultdict(list)
    for task in graph.tasks:
        if task.target is not None:
            writers[task.target].append(task.name)
            runs[task.target] += task_runs.get(task.task_id, ())
            if task.external_source is not None:
                external[task.target].append(task.external_source)
        for read in task.reads:
            readers[read].append(task.name)
    checked: dict[str, list[str]] = defaultdict(list)
    for rule in rules:
        checked[rule.table].append(rule.name)
    columns = _lineage_columns(graph)
    keys = sorted({*writers, *readers, *checked, *(t.writes for t in tasks if t.writes)})
    found, said = warehouse or {}, comments or {}
    return tuple(
        TableEntry(
            key,
            *_parts(key),
            columns=_columns(columns.get(key, ()), found.get(key), said.get(key, NO_COMMENTS)),
            writers=tuple(writers[key]),
            readers=tuple(dict.fromkeys(readers[key])),
            rules=tuple(checked[key]),
            external_sources=tuple(external[key]),
            last_run=max(runs[key], key=lambda r: r.run_id, default=None),
            in_warehouse=None if warehouse is None else key in warehouse,
            comment=said.get(key, NO_COMMENTS).table,
        )
        for key in keys
    )


def _parts(key: str) -> tuple[str | None, str, str]:
    """(database, schema, table) of a table key; a key without a database is in the default."""
    parts = key.split(".")
    if len(parts) >= 3:
        return ".".join(parts[:-2]), parts[-2], parts[-1]
    if len(parts) == 2:
        return None, parts[0], parts[1]
    return None, "", key


def _lineage_columns(graph: LineageGraph) -> dict[str, tuple[str, ...]]:
    """What LineageGraph.columns_of gives each table, for every table in one pass."""
    names: dict[str, dict[str, None]] = defaultdict(dict)
    for task in graph.tasks:
        if task.target is not None:
            names[task.target].update((c.name, None) for c in task.columns or ())
    for edge in graph.column_edges():
        if edge.source_column != ROWS:
            names[edge.source_table].setdefault(edge.source_column, None)
    return {table: tuple(found) for table, found in names.items()}


def read_warehouse_comments(settings: Warehouse, tables: Iterable[str]) -> dict[str, Comments]:
    """What the warehouse says of each table and its columns (tables it has, by key)."""
    with connect(settings) as conn:
        return {t: conn.comments(TargetObject.parse(t)) for t in tables}


def _columns(
    traced: tuple[str, ...], found: tuple[Column, ...] | None, said: Comments
) -> tuple[ColumnEntry, ...]:
    """The traced columns, typed where the warehouse has them; then the warehouse's others."""
    types = {c.name.lower(): c.type for c in found or ()}
    entries = [
        ColumnEntry(name, types.get(name.lower()), said.columns.get(name.lower()))
        for name in traced
    ]
    seen = {name.lower() for name in traced}
    entries += [
        ColumnEntry(c.name, c.type, said.columns.get(c.name.lower()))
        for c in found or ()
        if c.name.lower() not in seen
    ]
    return tuple(entries)
