"""Graphs drawn as SVG: nodes (with ports) in layers by their edges, edges as paths.

A minimal layered layout: each node's layer is its longest path from a source, nodes of a
layer stacked in the order given; ports are listed inside their node. Every element carries
its id and kind as attributes, so a page's script can walk and highlight paths.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from html import escape

NODE_WIDTH = 220
LAYER_GAP = 90
ROW_GAP = 24
HEADER = 26
PORT_HEIGHT = 18
MARGIN = 12


@dataclass(frozen=True)
class Port:
    id: str
    label: str
    href: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class Node:
    id: str
    label: str
    kind: str
    href: str | None = None
    ports: tuple[Port, ...] = ()
    title: str | None = None
    badge: str | None = None


@dataclass(frozen=True)
class Edge:
    source: str  # a node or port id
    target: str
    kind: str
    title: str | None = None


@dataclass(frozen=True)
class _Box:
    x: float
    y: float
    height: float


def draw(
    nodes: tuple[Node, ...] | list[Node],
    edges: tuple[Edge, ...] | list[Edge],
    *,
    focus: str | None = None,
    label: str = "",
) -> str:
    owner = {port.id: node.id for node in nodes for port in node.ports}
    boxes = _layout(nodes, edges, owner)
    anchors = _anchors(nodes, boxes)
    width = max((b.x + NODE_WIDTH for b in boxes.values()), default=0) + MARGIN
    height = max((b.y + b.height for b in boxes.values()), default=0) + MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" '
        f'aria-label="{escape(label)}" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}">'
    ]
    parts += [_edge(e, anchors) for e in edges if e.source in anchors and e.target in anchors]
    parts += [_node(n, boxes[n.id], n.id == focus) for n in nodes]
    parts.append("</svg>")
    return "".join(parts)


def _layout(
    nodes: tuple[Node, ...] | list[Node],
    edges: tuple[Edge, ...] | list[Edge],
    owner: dict[str, str],
) -> dict[str, _Box]:
    ids = [n.id for n in nodes]
    into: dict[str, set[str]] = defaultdict(set)
    for edge in edges:
        source, target = owner.get(edge.source, edge.source), owner.get(edge.target, edge.target)
        if source != target and source in ids and target in ids:
            into[target].add(source)
    layer: dict[str, int] = {}
    for _ in range(len(ids)):  # longest path, bounded so that a cycle ends
        changed = False
        for node_id in ids:
            value = max((layer.get(s, 0) + 1 for s in into[node_id]), default=0)
            if layer.get(node_id) != value:
                layer[node_id], changed = min(value, len(ids)), True
        if not changed:
            break
    heights = {n.id: HEADER + PORT_HEIGHT * len(n.ports) + 6 for n in nodes}
    boxes: dict[str, _Box] = {}
    tops: dict[int, float] = defaultdict(lambda: float(MARGIN))
    for node_id in ids:
        column = layer.get(node_id, 0)
        boxes[node_id] = _Box(
            MARGIN + column * (NODE_WIDTH + LAYER_GAP), tops[column], heights[node_id]
        )
        tops[column] += heights[node_id] + ROW_GAP
    return boxes


def _anchors(
    nodes: tuple[Node, ...] | list[Node], boxes: dict[str, _Box]
) -> dict[str, tuple[float, float, float]]:
    """(left x, right x, y) where edges meet each node and port."""
    found: dict[str, tuple[float, float, float]] = {}
    for node in nodes:
        box = boxes[node.id]
        found[node.id] = (box.x, box.x + NODE_WIDTH, box.y + HEADER / 2)
        for index, port in enumerate(node.ports):
            y = box.y + HEADER + PORT_HEIGHT * index + PORT_HEIGHT / 2
            found[port.id] = (box.x, box.x + NODE_WIDTH, y)
    return found


def _edge(edge: Edge, anchors: dict[str, tuple[float, float, float]]) -> str:
    _, x1, y1 = anchors[edge.source]
    x2, _, y2 = anchors[edge.target]
    middle = (x1 + x2) / 2
    title = f"<title>{escape(edge.title)}</title>" if edge.title else ""
    return (
        f'<path class="edge edge-{escape(edge.kind)}" data-source="{escape(edge.source)}" '
        f'data-target="{escape(edge.target)}" fill="none" '
        f'd="M{x1:.0f},{y1:.0f} C{middle:.0f},{y1:.0f} {middle:.0f},{y2:.0f} {x2:.0f},{y2:.0f}">'
        f"{title}</path>"
    )


def _node(node: Node, box: _Box, focused: bool) -> str:
    classes = f"node node-{escape(node.kind)}" + (" focus" if focused else "")
    title = f"<title>{escape(node.title)}</title>" if node.title else ""
    label = _link(node.href, f'<text class="label" x="8" y="17">{escape(_cut(node.label))}</text>')
    badge = ""
    if node.badge:
        badge = (
            f'<text class="badge" x="{NODE_WIDTH - 6}" y="17" text-anchor="end">'
            f"{escape(node.badge)}</text>"
        )
    ports = "".join(_port(port, index) for index, port in enumerate(node.ports))
    return (
        f'<g class="{classes}" data-id="{escape(node.id)}" '
        f'transform="translate({box.x:.0f},{box.y:.0f})">{title}'
        f'<rect width="{NODE_WIDTH}" height="{box.height:.0f}" rx="6"/>{label}{badge}{ports}</g>'
    )


def _port(port: Port, index: int) -> str:
    y = HEADER + PORT_HEIGHT * index
    title = f"<title>{escape(port.title)}</title>" if port.title else ""
    text = _link(port.href, f'<text x="14" y="{y + 13}">{escape(_cut(port.label))}</text>')
    return (
        f'<g class="port" data-id="{escape(port.id)}">{title}'
        f'<rect x="4" y="{y}" width="{NODE_WIDTH - 8}" height="{PORT_HEIGHT - 2}" rx="3"/>'
        f"{text}</g>"
    )


def _link(href: str | None, inner: str) -> str:
    return inner if href is None else f'<a href="{escape(href)}">{inner}</a>'


def _cut(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
