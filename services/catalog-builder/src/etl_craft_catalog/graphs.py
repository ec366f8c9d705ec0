"""The site's graphs: a table's lineage (its columns nested in it) and a pipeline's DAG.

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
from etl_craft.operations.catalog_views import Catalog, PipelineEntry, TableEntry, TaskEntry
from etl_craft_catalog.paths import pipeline_page, relative, table_page, task_page

DEPTHS: tuple[int | None, ...] = (1, 2, None)  # None: every path, however long
NO_LINEAGE = "no column lineage"


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


def pipeline_dag(catalog: Catalog, pipeline: PipelineEntry, page: str) -> str:
    """Its tasks by dependency, each with the tables it writes, reads and checks, and the
    other pipelines' tasks it waits for."""
    tasks = {t.name: t for t in catalog.tasks}
    own = [tasks[name] for name in pipeline.tasks if name in tasks]
    nodes: list[Node] = []
    edges: list[Edge] = []
    outside: dict[str, None] = {}
    for task in own:
        ports = [
            Port(
                f"{task.name}:{verb}:{table}", f"{verb} {table}", relative(page, table_page(table))
            )
            for verb, tables in (
                ("writes", (task.writes,) if task.writes else ()),
                ("reads", task.reads),
                ("checks", task.checks),
            )
            for table in tables
        ]
        badge = NO_LINEAGE if task.lineage_problem else (task.action or task.handler)
        nodes.append(
            Node(
                task.name,
                task.code,
                task.handler.lower(),
                href=relative(page, task_page(task.name)),
                ports=tuple(ports),
                title=task.lineage_problem or task.description,
                badge=badge,
            )
        )
        for up in task.upstream:
            if up.cross_pipeline:
                outside[up.task] = None
            edges.append(Edge(up.task, task.name, up.type.value.lower(), title=up.type.value))
    for name in outside:
        code = name.split(".", 1)[0]
        nodes.insert(
            0,
            Node(
                name,
                name,
                "external",
                href=relative(page, task_page(name)),
                title=f"a task of pipeline {code}",
                badge="waits for",
            ),
        )
    nodes[:0] = _waited_pipelines(pipeline, own, edges, page)
    return draw(nodes, edges, label=f"DAG of {pipeline.code}")


def _waited_pipelines(
    pipeline: PipelineEntry, own: list[TaskEntry], edges: list[Edge], page: str
) -> list[Node]:
    """The pipelines this one waits for, joined to its tasks that wait on nothing inside it."""
    names = {t.name for t in own}
    starts = [t.name for t in own if not any(u.task in names for u in t.upstream)]
    nodes = []
    for waited in pipeline.waits_for:
        node_id = f"p:{waited.pipeline_code}"
        nodes.append(
            Node(
                node_id,
                waited.pipeline_code,
                "external",
                href=relative(page, pipeline_page(waited.pipeline_code)),
                title=f"pipeline {waited.pipeline_code}: a run must end {waited.type.value}",
                badge="pipeline",
            )
        )
        kind = waited.type.value.lower()
        edges += [Edge(node_id, start, kind, title=waited.type.value) for start in starts]
    return nodes
