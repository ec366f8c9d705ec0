"""The site's graphs: a table's lineage (its columns nested in it), and the links of a
pipeline's DAG (drawn by etl_craft.operations.catalog.dag, as the web UI draws it).

The lineage of a table is every path up to its root sources and down to its last consumers,
drawn for a few depths so that the page's depth control switches between them. Column edges
join ports (copy and derived drawn apart); a task whose SELECT has no column lineage stays on
the graph as a node with a badge, joined to the tables it reads and writes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from etl_craft.drawing import Edge, Node, Port, draw
from etl_craft.lineage import ColumnEdge, LineageGraph, TaskLineage
from etl_craft.lineage.model import ROWS
from etl_craft.operations.catalog.dag import NO_LINEAGE
from etl_craft.operations.catalog.views import TableEntry
from etl_craft_catalog.paths import pipeline_page, relative, table_page, task_page

DEPTHS: tuple[int | None, ...] = (1, 2, None)  # None: every path, however long


def port_id(table: str, column: str) -> str:
    return f"c:{table}:{column.lower()}"


@dataclass(frozen=True)
class LineageIndex:
    """The lineage graph indexed once, so that each table's closure is a walk, not a search."""

    up: dict[str, set[str]]  # table -> tables it is made from
    down: dict[str, set[str]]
    into: dict[str, list[ColumnEdge]]  # table -> column edges that end in it
    untraced_into: dict[str, list[TaskLineage]]  # table -> untraced tasks writing it
    external: dict[str, list[TaskLineage]]  # table -> scripts writing it from outside

    @classmethod
    def of(cls, graph: LineageGraph) -> LineageIndex:
        index = cls(
            defaultdict(set),
            defaultdict(set),
            defaultdict(list),
            defaultdict(list),
            defaultdict(list),
        )
        for edge in graph.table_edges():
            if edge.source.startswith("script "):
                continue
            index.up[edge.target].add(edge.source)
            index.down[edge.source].add(edge.target)
        for column in graph.column_edges():
            index.into[column.target_table].append(column)
        for task in graph.tasks:
            if task.target is not None and task.problem is not None:
                index.untraced_into[task.target].append(task)
            if task.target is not None and task.external_source is not None:
                index.external[task.target].append(task)
        return index

    def closure(self, table: str, depth: int | None) -> list[str]:
        found = {table}
        for links in (self.up, self.down):
            frontier, level = {table}, 0
            while frontier and (depth is None or level < depth):
                level += 1
                frontier = {n for t in frontier for n in links.get(t, ())} - found
                found |= frontier
        return sorted(found)


def table_lineage(
    tables: Mapping[str, TableEntry], index: LineageIndex, table: TableEntry, page: str
) -> list[tuple[str, str, int]]:
    """(depth label, SVG, node count) for each depth; depths giving the same graph are merged."""
    drawn: list[tuple[str, str, int]] = []
    previous: list[str] | None = None
    for depth in DEPTHS:
        keys = index.closure(table.key, depth)
        if keys == previous:
            continue
        previous = keys
        svg = _lineage_svg(index, tables, keys, table.key, page)
        drawn.append(("all" if depth is None else str(depth), svg, len(keys)))
    return drawn


def _lineage_svg(
    index: LineageIndex, tables: Mapping[str, TableEntry], keys: list[str], focus: str, page: str
) -> str:
    shown = set(keys)
    nodes: list[Node] = []
    edges: list[Edge] = []
    for key in keys:
        entry = tables.get(key)
        columns = [c.name for c in entry.columns] if entry else []
        href = relative(page, table_page(key))
        nodes.append(
            Node(
                id=f"t:{key}",
                label=key,
                kind="table",
                href=href,
                ports=tuple(Port(port_id(key, c), c, href=f"{href}#col-{c}") for c in columns),
            )
        )
        for column in index.into.get(key, ()):
            if column.source_table in shown and column.source_column != ROWS:
                edges.append(
                    Edge(
                        port_id(column.source_table, column.source_column),
                        port_id(key, column.target_column),
                        column.kind.value,
                        title=f"{column.kind.value}, by {column.task}",
                    )
                )
            elif column.source_table in shown:
                edges.append(
                    Edge(
                        f"t:{column.source_table}",
                        port_id(key, column.target_column),
                        "derived",
                        title=f"counts rows, by {column.task}",
                    )
                )
        nodes += _gap_nodes(index, key, shown, edges, page)
    return draw(nodes, edges, focus=f"t:{focus}", label=f"lineage of {focus}")


def _gap_nodes(
    index: LineageIndex, key: str, shown: set[str], edges: list[Edge], page: str
) -> list[Node]:
    """Tasks whose SELECT could not be traced, and scripts: joined at table level."""
    nodes = []
    for task in index.untraced_into.get(key, ()):
        node_id = f"k:{task.name}"
        nodes.append(
            Node(
                node_id,
                task.name,
                "task",
                href=relative(page, task_page(task.name)),
                title=task.problem,
                badge=NO_LINEAGE,
            )
        )
        edges += [Edge(f"t:{read}", node_id, "table") for read in task.reads if read in shown]
        edges.append(Edge(node_id, f"t:{key}", "table", title=f"written by {task.name}"))
    for task in index.external.get(key, ()):
        node_id = f"x:{task.name}"
        nodes.append(
            Node(
                node_id,
                task.external_source or task.name,
                "external",
                href=relative(page, task_page(task.name)),
                title=f"run by {task.name}",
            )
        )
        edges.append(Edge(node_id, f"t:{key}", "table", title=f"landed by {task.name}"))
    return nodes


@dataclass(frozen=True)
class PageLinks:
    """Links from the site page ``page`` to the pages of tasks, tables and pipelines."""

    page: str

    def task(self, name: str) -> str:
        return relative(self.page, task_page(name))

    def table(self, key: str) -> str:
        return relative(self.page, table_page(key))

    def pipeline(self, code: str) -> str:
        return relative(self.page, pipeline_page(code))
