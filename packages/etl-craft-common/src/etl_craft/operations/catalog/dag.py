"""A pipeline's DAG as SVG, drawn once for the catalog site and the web UI alike.

Its tasks by dependency, each with the tables it writes, reads and checks (as port rows), and
the other pipelines and their tasks it waits for. Where each node links is the caller's: the
catalog links its own pages, the UI its pages or a published catalog's. Given a run's task
statuses, each task shows its status as its badge (text) and as a state-<status> class.

Edges that would say one thing many times are drawn once: the pipelines a run waits for lead
into one "run starts" node, which leads to the tasks that start it (not every pipeline to every
such task), and the failures an alert task listens for meet in one junction before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from etl_craft.drawing import Edge, Node, Port, draw
from etl_craft.operations.catalog.views import Catalog, PipelineEntry, TaskEntry

NO_LINEAGE = "no column lineage"
NOT_RUN = "NOT RUN"
# From this many FAILURE edges into one task on, they meet in a junction drawn before it.
BUNDLED_FAILURES = 3


class DagLinks(Protocol):
    """Where a node links; None leaves it unlinked."""

    def task(self, name: str) -> str | None: ...  # pipeline.task

    def table(self, key: str) -> str | None: ...

    def pipeline(self, code: str) -> str | None: ...


def pipeline_dag(
    catalog: Catalog,
    pipeline: PipelineEntry,
    links: DagLinks,
    statuses: Mapping[str, str] | None = None,
) -> str:
    """The DAG of ``pipeline``; with ``statuses`` (task code -> status of one run), coloured
    and labelled by them, a task the run has no row for being NOT RUN."""
    tasks = {t.name: t for t in catalog.tasks}
    own = [tasks[name] for name in pipeline.tasks if name in tasks]
    nodes: list[Node] = []
    edges: list[Edge] = []
    outside: dict[str, None] = {}
    for task in own:
        nodes.append(_task_node(task, links, statuses))
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
                href=links.task(name),
                title=f"a task of pipeline {code}",
                badge="waits for",
            ),
        )
    nodes[:0] = _waited_pipelines(pipeline, own, edges, links)
    _bundle_failures(nodes, edges)
    return draw(nodes, edges, label=f"DAG of {pipeline.code}")


def _task_node(task: TaskEntry, links: DagLinks, statuses: Mapping[str, str] | None) -> Node:
    ports = [
        Port(f"{task.name}:{verb}:{table}", f"{verb} {table}", links.table(table))
        for verb, tables in (
            ("writes", (task.writes,) if task.writes else ()),
            ("reads", task.reads),
            ("checks", task.checks),
        )
        for table in tables
    ]
    badge = NO_LINEAGE if task.lineage_problem else (task.action or task.handler)
    title = task.lineage_problem or task.description
    state = None
    if statuses is not None:
        badge = statuses.get(task.code, NOT_RUN)
        state = badge.lower().replace(" ", "-").replace("_", "-")
        title = f"{task.code}: {badge}" + (f"; {title}" if title else "")
    return Node(
        task.name,
        task.code,
        task.handler.lower(),
        href=links.task(task.name),
        ports=tuple(ports),
        title=title,
        badge=badge,
        state=state,
    )


def _waited_pipelines(
    pipeline: PipelineEntry, own: list[TaskEntry], edges: list[Edge], links: DagLinks
) -> list[Node]:
    """The pipelines this one waits for, joined to its tasks that wait on nothing inside it:
    through one "run starts" node where that draws fewer edges."""
    names = {t.name for t in own}
    starts = [t.name for t in own if not any(u.task in names for u in t.upstream)]
    gates: list[Node] = []
    waited_count = len(pipeline.waits_for)
    if waited_count * len(starts) > waited_count + len(starts):
        gate = f"start:{pipeline.code}"
        gates.append(
            Node(
                gate,
                "run starts",
                "gate",
                title=(
                    f"a run of {pipeline.code} starts once each of the {waited_count} "
                    "pipelines it waits for has ended as required"
                ),
                badge=f"after {waited_count} pipelines",
            )
        )
        edges += [Edge(gate, start, "start", title="the run starts") for start in starts]
        starts = [gate]
    nodes = []
    for waited in pipeline.waits_for:
        node_id = f"p:{waited.pipeline_code}"
        nodes.append(
            Node(
                node_id,
                waited.pipeline_code,
                "external",
                href=links.pipeline(waited.pipeline_code),
                title=f"pipeline {waited.pipeline_code}: a run must end {waited.type.value}",
                badge="pipeline",
            )
        )
        kind = waited.type.value.lower()
        edges += [Edge(node_id, start, kind, title=waited.type.value) for start in starts]
    return nodes + gates


def _bundle_failures(nodes: list[Node], edges: list[Edge]) -> None:
    """Route the FAILURE edges into a task through one junction when there are many."""
    into: dict[str, list[Edge]] = {}
    for edge in edges:
        if edge.kind == "failure":
            into.setdefault(edge.target, []).append(edge)
    for target, failures in into.items():
        if len(failures) < BUNDLED_FAILURES:
            continue
        junction = f"any-failure:{target}"
        nodes.append(
            Node(
                junction,
                "any fails",
                "junction",
                title=f"{target} runs when any of these {len(failures)} tasks fails",
                badge=f"{len(failures)} tasks",
            )
        )
        edges[:] = [edge for edge in edges if edge not in failures]
        edges += [Edge(edge.source, junction, "failure", title=edge.title) for edge in failures]
        edges.append(Edge(junction, target, "failure", title=f"FAILURE of any of {len(failures)}"))
