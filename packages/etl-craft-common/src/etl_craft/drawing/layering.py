"""Layers for a directed graph: ids resolved, cycles broken, every edge to a later layer."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

from etl_craft.drawing.model import Edge, Node

# A resolved edge end: the node's index in the input and the port's index in that node, if any.
Endpoint = tuple[int, int | None]


def index_endpoints(nodes: Sequence[Node]) -> dict[str, Endpoint]:
    found: dict[str, Endpoint] = {}
    for node_index, node in enumerate(nodes):
        named: list[tuple[str, Endpoint]] = [(node.id, (node_index, None))]
        named += [(port.id, (node_index, i)) for i, port in enumerate(node.ports)]
        for key, end in named:
            if key in found:
                raise ValueError(
                    f"id {key!r} names two things in the drawing; expected node and port ids "
                    "unique across the whole drawing; prefix a port's id with its node's id"
                )
            found[key] = end
    return found


def resolve_edges(
    edges: Sequence[Edge], ends: dict[str, Endpoint]
) -> list[tuple[Endpoint, Endpoint]]:
    resolved = []
    for edge in edges:
        for key in (edge.source, edge.target):
            if key not in ends:
                raise ValueError(
                    f"edge {edge.source!r} -> {edge.target!r} names {key!r}, which is neither a "
                    "node nor a port of the drawing; add that node or leave the edge out"
                )
        resolved.append((ends[edge.source], ends[edge.target]))
    return resolved


def back_edges(count: int, pairs: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
    """The edges that close a cycle, found by depth-first search in input order."""
    successors: list[dict[int, None]] = [{} for _ in range(count)]
    for u, v in pairs:
        if u != v:
            successors[u][v] = None
    state = [0] * count  # 0 unseen, 1 on the stack, 2 done
    back: set[tuple[int, int]] = set()
    for root in range(count):
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, iter(successors[root]))]
        while stack:
            u, pending = stack[-1]
            for v in pending:
                if state[v] == 1:
                    back.add((u, v))
                elif state[v] == 0:
                    state[v] = 1
                    stack.append((v, iter(successors[v])))
                    break
            else:
                state[u] = 2
                stack.pop()
    return back


def assign_layers(count: int, pairs: Iterable[tuple[int, int]]) -> list[int]:
    """Longest path from the sources over acyclic `pairs`; a source then sits just before its
    nearest successor, so a table read only at the end does not drag a long edge across."""
    successors: list[list[int]] = [[] for _ in range(count)]
    indegree = [0] * count
    for u, v in pairs:
        successors[u].append(v)
        indegree[v] += 1
    sources = [v for v in range(count) if indegree[v] == 0]
    layer = [0] * count
    ready = deque(sources)
    while ready:
        u = ready.popleft()
        for v in successors[u]:
            layer[v] = max(layer[v], layer[u] + 1)
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    for v in sources:
        if successors[v]:
            layer[v] = min(layer[s] for s in successors[v]) - 1
    return layer
