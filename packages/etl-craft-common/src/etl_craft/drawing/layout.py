"""A layered (Sugiyama) layout of nodes with port rows, layers running left to right.

Steps: back edges found by depth-first search in input order are reversed, so cycles end;
layers by longest path from the sources; a dummy point per layer crossed by a long edge
(one chain per pair of nodes, shared by the edges between their ports); barycenter sweeps
order each layer by row height; isotonic packing places the layers; edges become point routes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from etl_craft.drawing.layering import (
    Endpoint,
    assign_layers,
    back_edges,
    index_endpoints,
    resolve_edges,
)
from etl_craft.drawing.model import Edge, Node
from etl_craft.drawing.ordering import reduce_crossings
from etl_craft.drawing.placement import Segment, place

HEADER = 26.0
ROW = 20.0
CHAR = 7.0  # an average glyph of the 12px sans-serif the SVG sets
PADDING = 10.0
MIN_WIDTH = 120.0
MAX_WIDTH = 300.0
LAYER_GAP = 90.0
MARGIN = 12.0
DUMMY_HEIGHT = 4.0

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Box:
    node: Node
    layer: int
    x: float
    y: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.x + self.width

    def row_y(self, port: int | None) -> float:
        """The height an edge attaches at: the port's row, or the header for the node itself."""
        return self.y + (HEADER / 2 if port is None else HEADER + ROW * port + ROW / 2)


@dataclass(frozen=True, slots=True)
class Route:
    """An edge's path: through `points`, from its source to its target.

    `backward` marks an edge reversed to break a cycle: it leaves the source's left side and
    enters the target's right side. `loop` marks an edge within one node, drawn on its right.
    """

    edge: Edge
    points: tuple[Point, ...]
    backward: bool = False
    loop: bool = False


@dataclass(frozen=True, slots=True)
class Layout:
    boxes: tuple[Box, ...]
    routes: tuple[Route, ...]
    width: float
    height: float


def node_width(node: Node) -> float:
    header = len(node.label) + (len(node.badge) + 3 if node.badge else 0)
    widest = max([header, *(len(port.label) for port in node.ports)])
    return min(MAX_WIDTH, max(MIN_WIDTH, widest * CHAR + 2 * PADDING))


def node_height(node: Node) -> float:
    return HEADER + ROW * len(node.ports) + (PADDING / 2 if node.ports else 0)


@dataclass(slots=True)
class _Units:
    """Nodes (first, by input index) and dummy points, each with its layer and height."""

    layer: list[int]
    height: list[float]
    dummy: list[bool]

    def add_dummy(self, layer: int) -> int:
        self.layer.append(layer)
        self.height.append(DUMMY_HEIGHT)
        self.dummy.append(True)
        return len(self.layer) - 1


def layout(nodes: Sequence[Node], edges: Sequence[Edge]) -> Layout:
    resolved = resolve_edges(edges, index_endpoints(nodes))
    pairs = [(source[0], target[0]) for source, target in resolved]
    back = back_edges(len(nodes), pairs)
    oriented = dict.fromkeys((v, u) if (u, v) in back else (u, v) for u, v in pairs if u != v)
    layers = assign_layers(len(nodes), oriented)
    units = _Units(layers[:], [node_height(n) for n in nodes], [False] * len(nodes))
    chains = {
        (u, v): [units.add_dummy(layer) for layer in range(layers[u] + 1, layers[v])]
        for u, v in oriented
    }
    segments = _segments(resolved, layers, chains)
    by_layer: list[list[int]] = [[] for _ in range(max(layers, default=-1) + 1)]
    for unit, layer in enumerate(units.layer):
        by_layer[layer].append(unit)
    order = reduce_crossings(by_layer, segments, units.height, units.dummy)
    tops = place(order, segments, units.height, units.dummy)
    lefts, widths = _columns(nodes, layers, len(by_layer))
    boxes = tuple(
        Box(node, layers[i], lefts[layers[i]], MARGIN + tops[i], node_width(node), units.height[i])
        for i, node in enumerate(nodes)
    )
    routes = tuple(
        _route(edge, ends, boxes, chains, tops, lefts, widths)
        for edge, ends in zip(edges, resolved, strict=True)
    )
    width = lefts[-1] + widths[-1] + MARGIN if lefts else 2 * MARGIN
    height = max((box.y + box.height for box in boxes), default=0.0) + MARGIN
    return Layout(boxes, routes, width, height)


def _segments(
    resolved: Sequence[tuple[Endpoint, Endpoint]],
    layers: Sequence[int],
    chains: dict[tuple[int, int], list[int]],
) -> list[Segment]:
    """Hops between adjacent layers, each once: edges sharing a chain of dummies are one bundle
    there, drawn and counted as one line."""
    segments: list[Segment] = []
    for source, target in resolved:
        if source[0] == target[0]:
            continue
        forward = layers[source[0]] < layers[target[0]]
        upper, lower = (source, target) if forward else (target, source)
        path = [upper[0], *chains[upper[0], lower[0]], lower[0]]
        offsets = [_offset(upper[1])] + [DUMMY_HEIGHT / 2] * (len(path) - 2) + [_offset(lower[1])]
        segments += [
            (path[i], offsets[i], path[i + 1], offsets[i + 1]) for i in range(len(path) - 1)
        ]
    return list(dict.fromkeys(segments))


def _offset(port: int | None) -> float:
    return HEADER / 2 if port is None else HEADER + ROW * port + ROW / 2


def _columns(
    nodes: Sequence[Node], layers: Sequence[int], count: int
) -> tuple[list[float], list[float]]:
    widths = [0.0] * count
    for node, layer in zip(nodes, layers, strict=True):
        widths[layer] = max(widths[layer], node_width(node))
    lefts, x = [], MARGIN
    for width in widths:
        lefts.append(x)
        x += width + LAYER_GAP
    return lefts, widths


def _route(
    edge: Edge,
    ends: tuple[Endpoint, Endpoint],
    boxes: Sequence[Box],
    chains: dict[tuple[int, int], list[int]],
    tops: dict[int, float],
    lefts: Sequence[float],
    widths: Sequence[float],
) -> Route:
    (source_node, source_port), (target_node, target_port) = ends
    source, target = boxes[source_node], boxes[target_node]
    start_y, end_y = source.row_y(source_port), target.row_y(target_port)
    if source_node == target_node:
        return Route(edge, ((source.right, start_y), (source.right, end_y)), loop=True)
    backward = source.layer > target.layer
    if backward:
        dummies = chains[target_node, source_node][::-1]
        start, end = (source.x, start_y), (target.right, end_y)
    else:
        dummies = chains[source_node, target_node]
        start, end = (source.right, start_y), (target.x, end_y)
    step = -1 if backward else 1
    middle: list[Point] = []
    for hop, dummy in enumerate(dummies, start=1):
        layer = source.layer + step * hop
        y = MARGIN + tops[dummy] + DUMMY_HEIGHT / 2
        span = [(lefts[layer], y), (lefts[layer] + widths[layer], y)]
        middle += span[::-1] if backward else span
    return Route(edge, (start, *middle, end), backward=backward)
