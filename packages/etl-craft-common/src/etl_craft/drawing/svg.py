"""A layout written as one self-contained `<svg>` element, to embed in an HTML page.

Classes and data attributes carry the meaning (`node-<kind>`, `state-<state>`, `edge-<kind>`,
`data-id`, `data-source`, `data-target`) so a page's script can trace and filter; the embedded
style, scoped to `.etl-drawing`, draws copy and derived edges apart without any page CSS.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from html import escape
from itertools import pairwise

from etl_craft.drawing.layout import (
    CHAR,
    HEADER,
    PADDING,
    ROW,
    Box,
    Point,
    Route,
    layout,
)
from etl_craft.drawing.model import Edge, Node, Port

LOOP_REACH = 28.0

STYLE = """\
.etl-drawing{font:12px system-ui,-apple-system,'Segoe UI',sans-serif}
.etl-drawing .node-box{fill:#fff;stroke:#8a94a6}
.etl-drawing .node-header{fill:#e8edf5;stroke:#8a94a6}
.etl-drawing .node-source .node-header{fill:#e3f2e6}
.etl-drawing .node-script .node-header{fill:#f3e8fb}
.etl-drawing .node-pipeline-external .node-box{stroke-dasharray:4 3}
.etl-drawing .node-pipeline-external .node-header{fill:#f4f4f4;stroke-dasharray:4 3}
.etl-drawing .node-gate .node-header{fill:#fdf3d8}
.etl-drawing .node-junction .node-header{fill:#fbe3e0}
.etl-drawing .node-label{font-weight:600;fill:#1f2933}
.etl-drawing .node-badge{font-size:10px;fill:#8a4b00}
.etl-drawing .port-row{fill:#fff;fill-opacity:0}
.etl-drawing .port:hover .port-row{fill:#eef3fb;fill-opacity:1}
.etl-drawing .port-label{fill:#323f4b}
.etl-drawing a text{fill:#1a56b0}
.etl-drawing .edge{fill:none;stroke:#7b8794;stroke-width:1.3}
.etl-drawing .edge-copy{stroke:#52606d}
.etl-drawing .edge-derived{stroke:#b4690e;stroke-dasharray:5 3}
.etl-drawing .edge-table{stroke:#9aa5b1;stroke-width:2}
.etl-drawing .edge-FAILURE{stroke:#c0392b;stroke-dasharray:6 3}
.etl-drawing .edge-HAS_DATA{stroke:#2d6a9f;stroke-dasharray:2 3}
.etl-drawing .edge-ALWAYS{stroke:#616e7c;stroke-dasharray:8 3 2 3}
.etl-drawing .arrow{fill:#7b8794}
.etl-drawing .focus>.node-box,.etl-drawing .focus>.port-row{stroke:#d97706;stroke-width:2}
.etl-drawing .port.focus>.port-row{fill:#fff3d6;fill-opacity:1}
.etl-drawing .port.highlight>.port-row{fill:#fff3d6;fill-opacity:1}
.etl-drawing .edge.highlight{stroke:#d97706;stroke-width:2.5}
.etl-drawing .dim{opacity:.25}
.etl-drawing .empty{fill:#7b8794}
.etl-drawing .state-success .node-header{fill:#d3efdc}
.etl-drawing .state-failed .node-header,.etl-drawing .state-cancelled .node-header{fill:#f8d7d4}
.etl-drawing .state-in-progress .node-header{fill:#d6e6fa}
.etl-drawing .state-skipped .node-header,.etl-drawing .state-not-run .node-header{fill:#eceff1}
.etl-drawing [class*=state-] .node-badge{font-weight:700;fill:#1f2933}"""


def draw(
    nodes: Sequence[Node], edges: Sequence[Edge], *, focus: str | None = None, label: str = ""
) -> str:
    """The graph laid out and rendered; `focus`, a node or port id, gets the `focus` class."""
    if not nodes:
        return _empty(label)
    placed = layout(nodes, edges)
    marker = f"arrow-{_digest(nodes, edges)}"
    parts = [_open(placed.width, placed.height, label), _defs(marker), '<g class="edges">']
    parts += [_edge(route, marker) for route in placed.routes]
    parts.append('</g><g class="nodes">')
    parts += [_node(box, focus) for box in placed.boxes]
    parts.append("</g></svg>")
    return "".join(parts)


def _open(width: float, height: float, label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="etl-drawing" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" width="{_n(width)}" height="{_n(height)}" '
        f'role="img" aria-label="{_a(label)}">'
    )


def _empty(label: str) -> str:
    return (
        _open(240, 40, label)
        + f"<style>{STYLE}</style>"
        + '<text class="empty" x="12" y="24">Nothing to draw</text></svg>'
    )


def _defs(marker: str) -> str:
    return (
        f"<style>{STYLE}</style><defs>"
        f'<marker id="{marker}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse">'
        '<path class="arrow" d="M0,0L10,5L0,10z"/></marker></defs>'
    )


def _digest(nodes: Sequence[Node], edges: Sequence[Edge]) -> str:
    """A marker id unique to the graph: inline SVGs share one id space in the page, and a
    marker inside a hidden drawing does not render for the others."""
    keys = [node.id for node in nodes] + [f"{e.source}\x1f{e.target}" for e in edges]
    return hashlib.blake2s("\x1e".join(keys).encode(), digest_size=6).hexdigest()


def _edge(route: Route, marker: str) -> str:
    edge = route.edge
    extra = " edge-loop" if route.loop else " edge-back" if route.backward else ""
    title = f"<title>{_t(edge.title)}</title>" if edge.title else ""
    return (
        f'<path class="edge edge-{_a(edge.kind)}{extra}" d="{_path(route)}" '
        f'data-source="{_a(edge.source)}" data-target="{_a(edge.target)}" '
        f'marker-end="url(#{marker})">{title}</path>'
    )


def _path(route: Route) -> str:
    points = route.points
    if route.loop:
        (x, y1), (_, y2) = points
        reach = x + LOOP_REACH
        return (
            f"M{_n(x)},{_n(y1)}C{_n(reach)},{_n(y1 - 8)} {_n(reach)},{_n(y2 + 8)} {_n(x)},{_n(y2)}"
        )
    commands = [f"M{_p(points[0])}"]
    for (x1, y1), (x2, y2) in pairwise(points):
        bend = (x2 - x1) / 2
        commands.append(f"C{_p((x1 + bend, y1))} {_p((x2 - bend, y2))} {_p((x2, y2))}")
    return "".join(commands)


def _node(box: Box, focus: str | None) -> str:
    node = box.node
    classes = f"node node-{_a(node.kind)}" + (" focus" if node.id == focus else "")
    if node.state is not None:
        classes += f" state-{_a(node.state)}"
    room = int((box.width - 2 * PADDING) / CHAR)
    badge = ""
    if node.badge:
        room -= len(node.badge) + 1
        badge = (
            f'<text class="node-badge" x="{_n(box.right - PADDING)}" '
            f'y="{_n(box.y + HEADER / 2 + 4)}" text-anchor="end">{_t(node.badge)}</text>'
        )
    text = (
        f'<text class="node-label" x="{_n(box.x + PADDING)}" y="{_n(box.y + HEADER / 2 + 4)}">'
        f"{_t(_fit(node.label, room))}</text>"
    )
    parts = [
        f'<g class="{classes}" id="n-{_a(node.id)}" data-id="{_a(node.id)}">',
        _tooltip(node.title, node.label, room),
        f'<rect class="node-box" x="{_n(box.x)}" y="{_n(box.y)}" width="{_n(box.width)}" '
        f'height="{_n(box.height)}" rx="4"/>',
        f'<rect class="node-header" x="{_n(box.x)}" y="{_n(box.y)}" width="{_n(box.width)}" '
        f'height="{_n(HEADER)}" rx="4"/>',
        _link(node.href, text),
        badge,
    ]
    parts += [_port(box, i, port, focus) for i, port in enumerate(node.ports)]
    parts.append("</g>")
    return "".join(parts)


def _port(box: Box, index: int, port: Port, focus: str | None) -> str:
    top = box.y + HEADER + ROW * index
    room = int((box.width - 2 * PADDING) / CHAR)
    classes = "port focus" if port.id == focus else "port"
    text = (
        f'<text class="port-label" x="{_n(box.x + PADDING)}" y="{_n(top + ROW / 2 + 4)}">'
        f"{_t(_fit(port.label, room))}</text>"
    )
    return (
        f'<g class="{classes}" id="p-{_a(port.id)}" data-id="{_a(port.id)}">'
        f"{_tooltip(port.title, port.label, room)}"
        f'<rect class="port-row" x="{_n(box.x + 1)}" y="{_n(top)}" width="{_n(box.width - 2)}" '
        f'height="{_n(ROW)}"/>{_link(port.href, text)}</g>'
    )


def _tooltip(title: str | None, label: str, room: int) -> str:
    """The title, or else the full label when the drawn one is cut short."""
    shown = title if title else label if len(label) > room else None
    return f"<title>{_t(shown)}</title>" if shown else ""


def _link(href: str | None, inner: str) -> str:
    return f'<a href="{_a(href)}">{inner}</a>' if href else inner


def _fit(text: str, room: int) -> str:
    return text if len(text) <= room else text[: max(room - 1, 1)] + "…"


def _t(text: str) -> str:
    return escape(text, quote=False)


def _a(value: str) -> str:
    return escape(value, quote=True)


def _p(point: Point) -> str:
    return f"{_n(point[0])},{_n(point[1])}"


def _n(value: float) -> str:
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
