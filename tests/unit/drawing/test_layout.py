"""The layered layout: layers, dummy points, crossing reduction, ports and cycles."""

from __future__ import annotations

import itertools

import pytest

from etl_craft.drawing import Box, Edge, Layout, Node, Port, layout, ordering


def node(node_id: str, *columns: str) -> Node:
    return Node(node_id, node_id, "table", ports=tuple(Port(f"{node_id}.{c}", c) for c in columns))


def boxes(placed: Layout) -> dict[str, Box]:
    return {box.node.id: box for box in placed.boxes}


def crossings(placed: Layout) -> int:
    """Pairs of route pieces spanning the same gap between layers whose ends swap heights."""
    gaps: dict[float, list[tuple[float, float]]] = {}
    for route in placed.routes:
        for (_, y1), (x2, y2) in itertools.pairwise(route.points):
            gaps.setdefault(x2, []).append((y1, y2))
    return sum(
        1
        for pieces in gaps.values()
        for (a1, a2), (b1, b2) in itertools.combinations(pieces, 2)
        if (a1 - b1) * (a2 - b2) < 0
    )


def test_every_edge_reaches_a_later_layer() -> None:
    nodes = [node(n) for n in ("e", "d", "c", "b", "a")]
    pairs = [("a", "b"), ("b", "c"), ("a", "c"), ("c", "d"), ("b", "e"), ("d", "e")]
    placed = layout(nodes, [Edge(s, t, "table") for s, t in pairs])
    placed_boxes = boxes(placed)
    assert [placed_boxes[n].layer for n in "abcde"] == [0, 1, 2, 3, 4]
    for route in placed.routes:
        assert not route.backward
        assert placed_boxes[route.edge.source].layer < placed_boxes[route.edge.target].layer
    assert all(placed_boxes[n].x < placed_boxes[m].x for n, m in itertools.pairwise("abcde"))


def test_a_source_sits_just_before_its_only_reader() -> None:
    nodes = [node(n) for n in ("a", "b", "c", "late")]
    edges = [Edge("a", "b", "table"), Edge("b", "c", "table"), Edge("late", "c", "table")]
    placed_boxes = boxes(layout(nodes, edges))
    assert placed_boxes["late"].layer == placed_boxes["c"].layer - 1 == 1


def test_a_long_edge_runs_through_dummy_points_clear_of_the_nodes() -> None:
    nodes = [node(n, "x") for n in ("a", "b", "c", "d")]
    chain = [Edge(f"{s}.x", f"{t}.x", "copy") for s, t in itertools.pairwise("abcd")]
    placed = layout(nodes, [*chain, Edge("a.x", "d.x", "derived")])
    long = next(r for r in placed.routes if r.edge.kind == "derived")
    assert len(long.points) == 2 + 2 * 2  # in and out of a dummy in each crossed layer
    placed_boxes = boxes(placed)
    for x, y in long.points[1:-1]:
        for box in (placed_boxes["b"], placed_boxes["c"]):
            inside_x = box.x <= x <= box.right
            assert not (inside_x and box.y <= y <= box.y + box.height), (x, y, box)
    for route in placed.routes:
        if route is not long:
            assert len(route.points) == 2


def test_crossing_reduction_untangles_a_crossed_input(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [node(n) for n in ("a1", "a2", "a3", "b1", "b2", "b3")]
    edges = [Edge("a1", "b3", "table"), Edge("a2", "b2", "table"), Edge("a3", "b1", "table")]
    assert crossings(layout(nodes, edges)) == 0
    monkeypatch.setattr(ordering, "SWEEPS", 0)
    assert crossings(layout(nodes, edges)) == 3


def test_crossing_reduction_orders_by_the_ports_rows() -> None:
    nodes = [node("src", "p1", "p2", "p3"), node("t1"), node("t2"), node("t3")]
    edges = [
        Edge("src.p1", "t3", "copy"),
        Edge("src.p2", "t2", "copy"),
        Edge("src.p3", "t1", "copy"),
    ]
    placed = layout(nodes, edges)
    placed_boxes = boxes(placed)
    assert placed_boxes["t3"].y < placed_boxes["t2"].y < placed_boxes["t1"].y
    assert crossings(placed) == 0


def test_ports_keep_their_order_and_edges_attach_to_their_rows() -> None:
    nodes = [node("s", "c1", "c2", "c3"), node("t", "d1", "d2")]
    edges = [Edge("s.c3", "t.d1", "copy"), Edge("s.c1", "t.d2", "derived"), Edge("s", "t", "table")]
    placed = layout(nodes, edges)
    s, t = boxes(placed)["s"], boxes(placed)["t"]
    assert s.row_y(0) < s.row_y(1) < s.row_y(2) < s.y + s.height
    routes = {(r.edge.source, r.edge.target): r for r in placed.routes}
    assert routes["s.c3", "t.d1"].points[0] == (s.right, s.row_y(2))
    assert routes["s.c3", "t.d1"].points[-1] == (t.x, t.row_y(0))
    assert routes["s.c1", "t.d2"].points[-1] == (t.x, t.row_y(1))
    assert routes["s", "t"].points[0][1] < s.row_y(0)  # the node itself attaches at its header


def test_a_cycle_ends_with_one_edge_drawn_backward() -> None:
    nodes = [node(n, "x") for n in ("a", "b", "c")]
    edges = [Edge("a", "b", "t"), Edge("b", "c", "t"), Edge("c", "a", "t"), Edge("b.x", "b", "t")]
    placed = layout(nodes, edges)
    routes = {(r.edge.source, r.edge.target): r for r in placed.routes}
    assert [boxes(placed)[n].layer for n in "abc"] == [0, 1, 2]
    back = routes["c", "a"]
    assert back.backward
    assert back.points[0] == (boxes(placed)["c"].x, boxes(placed)["c"].row_y(None))
    assert back.points[-1] == (boxes(placed)["a"].right, boxes(placed)["a"].row_y(None))
    assert routes["b.x", "b"].loop
    assert not any(r.backward or r.loop for k, r in routes.items() if k in {("a", "b"), ("b", "c")})


def test_edges_within_one_node_are_loops_on_its_right() -> None:
    placed = layout([node("t", "a", "b")], [Edge("t.a", "t.b", "copy"), Edge("t.a", "t.a", "copy")])
    box = placed.boxes[0]
    first, second = placed.routes
    assert first.loop
    assert first.points == ((box.right, box.row_y(0)), (box.right, box.row_y(1)))
    assert second.loop
    assert second.points == ((box.right, box.row_y(0)),) * 2


def test_the_drawing_spans_every_box() -> None:
    nodes = [node(f"n{i}", *(f"c{j}" for j in range(i % 4))) for i in range(12)]
    edges = [Edge(f"n{i}", f"n{(i * 5 + 3) % 12}", "table") for i in range(12)]
    placed = layout(nodes, edges)
    for a, b in itertools.combinations(placed.boxes, 2):
        apart_x = a.right <= b.x or b.right <= a.x
        apart_y = a.y + a.height <= b.y or b.y + b.height <= a.y
        assert apart_x or apart_y, (a.node.id, b.node.id)
    assert all(box.x > 0 and box.right < placed.width for box in placed.boxes)
    assert all(box.y > 0 and box.y + box.height < placed.height for box in placed.boxes)


@pytest.mark.parametrize(
    ("nodes", "edges", "message"),
    [
        ([node("a", "x"), node("a.x")], [], "'a.x' names two things"),
        ([node("a")], [Edge("a", "missing", "table")], "'missing', which is neither"),
    ],
)
def test_ids_must_name_one_thing(nodes: list[Node], edges: list[Edge], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        layout(nodes, edges)
