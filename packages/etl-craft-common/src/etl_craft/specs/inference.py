"""Dependencies inferred from lineage: a task that reads a table another task of its pipeline
writes depends on that writer.

When several tasks write the table (a SETUP_TABLE task, then the merge that fills it), the
reader depends on the last of them: the writers no other writer depends on through stated
edges. An inferred edge is written only when nothing else covers it: a stated dependency on the
same task wins (it may say HAS_DATA or ALWAYS), and an edge another path already implies is
left out, so a spec's rows are the DAG's transitive reduction over what it infers. Edges across
pipelines are never inferred: a spec states them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from etl_craft.specs.model import PipelineSpec, TaskDependencySpec


class EdgeOutcome(StrEnum):
    WRITTEN = "written"  # becomes a CFG_TASK_DEPENDENCY row
    STATED = "stated"  # the spec states a dependency on the same task already
    IMPLIED = "implied"  # another path of the DAG orders the two tasks already
    CYCLE = "cycle"  # the writer depends on the reader: the spec must say which runs first


@dataclass(frozen=True)
class TableUse:
    """What lineage finds of one task: the tables it reads and the table it writes."""

    reads: tuple[str, ...]
    target: str | None


@dataclass(frozen=True)
class InferredEdge:
    pipeline: str
    task: str
    upstream_task: str
    table: str  # the table the task reads and the upstream task writes
    outcome: EdgeOutcome


Graph = dict[str, set[str]]  # task code -> the task codes it depends on


def infer_edges(spec: PipelineSpec, uses: Mapping[str, TableUse]) -> tuple[InferredEdge, ...]:
    """Every edge lineage suggests within ``spec``'s pipeline, with what became of it.

    ``uses`` holds the lineage of the pipeline's active tasks by task code.
    """
    stated = _stated(spec)
    writers: dict[str, list[str]] = {}
    for code, use in uses.items():
        if use.target is not None:
            writers.setdefault(use.target, []).append(code)
    found: dict[tuple[str, str], str] = {}
    for code, use in uses.items():
        for table in use.reads:
            for writer in _last_writers(stated, [w for w in writers.get(table, []) if w != code]):
                found.setdefault((code, writer), table)
    graph: Graph = {code: set(ups) for code, ups in stated.items()}
    candidates = [pair for pair in found if pair[1] not in stated.get(pair[0], set())]
    cycles = {pair for pair in candidates if _reaches(stated, pair[1], pair[0])}
    for task, upstream in candidates:
        if (task, upstream) not in cycles:
            graph.setdefault(task, set()).add(upstream)
    return tuple(
        InferredEdge(
            spec.code, task, upstream, table, _outcome(stated, graph, cycles, task, upstream)
        )
        for (task, upstream), table in found.items()
    )


def written_edges(edges: tuple[InferredEdge, ...]) -> dict[str, tuple[TaskDependencySpec, ...]]:
    """The edges that become rows, by the depending task's code."""
    by_task: dict[str, list[TaskDependencySpec]] = {}
    for edge in edges:
        if edge.outcome is EdgeOutcome.WRITTEN:
            by_task.setdefault(edge.task, []).append(
                TaskDependencySpec(edge.upstream_task, edge.pipeline)
            )
    return {task: tuple(found) for task, found in by_task.items()}


def _stated(spec: PipelineSpec) -> Graph:
    return {
        task.code: {d.upstream_task for d in task.depends_on if d.upstream_pipeline == spec.code}
        for task in spec.tasks
        if task.active
    }


def _last_writers(stated: Graph, writers: list[str]) -> list[str]:
    """The writers that no other writer depends on, directly or through others."""
    return [w for w in writers if not any(_reaches(stated, other, w) for other in writers)]


def _outcome(
    stated: Graph, graph: Graph, cycles: set[tuple[str, str]], task: str, upstream: str
) -> EdgeOutcome:
    if upstream in stated.get(task, set()):
        return EdgeOutcome.STATED
    if (task, upstream) in cycles:
        return EdgeOutcome.CYCLE
    if _reaches(graph, task, upstream, direct=False):
        return EdgeOutcome.IMPLIED
    return EdgeOutcome.WRITTEN


def _reaches(graph: Graph, start: str, goal: str, *, direct: bool = True) -> bool:
    """Whether ``start`` depends on ``goal`` through the graph; ``direct=False`` ignores the
    edge from ``start`` to ``goal`` itself, to ask whether another path covers it."""

    def upstreams(node: str) -> set[str]:
        # Through a cycle the walk comes back to start: its edge to goal is still not another path.
        found = graph.get(node, set())
        return found if direct or node != start else found - {goal}

    frontier = list(upstreams(start))
    seen = set(frontier)
    while frontier:
        node = frontier.pop()
        if node == goal:
            return True
        for upstream in upstreams(node) - seen:
            seen.add(upstream)
            frontier.append(upstream)
    return False
