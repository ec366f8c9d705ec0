"""The SVG: well-formed, classed for scripts, escaped, self-styled and reproducible."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from etl_craft.drawing import Edge, Node, Port, draw, layout

NS = {"s": "http://www.w3.org/2000/svg"}
HOSTILE = "<script>alert(\"x\")</script> & 'y'"


def lineage() -> tuple[list[Node], list[Edge]]:
    orders = Node(
        "raw.orders",
        "raw.orders",
        "source",
        href="tables/raw.orders.html",
        ports=(Port("raw.orders.id", "id"), Port("raw.orders.amount", "amount", title="numeric")),
    )
    facts = Node(
        "mart.facts",
        "mart.facts",
        "table",
        badge="no column lineage",
        ports=(Port("mart.facts.id", "id", href="tables/mart.facts.html#id"),),
    )
    edges = [
        Edge("raw.orders.id", "mart.facts.id", "copy"),
        Edge("raw.orders.amount", "mart.facts.id", "derived", title="amount * 2"),
    ]
    return [orders, facts], edges


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_the_svg_carries_classes_and_data_attributes_for_scripts() -> None:
    nodes, edges = lineage()
    root = parse(draw(nodes, edges, label="Lineage of mart.facts"))
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert (root.get("role"), root.get("aria-label")) == ("img", "Lineage of mart.facts")
    placed = layout(nodes, edges)
    assert root.get("viewBox") == f"0 0 {placed.width:g} {placed.height:g}"
    groups = {g.get("data-id"): g for g in root.iterfind(".//s:g[@data-id]", NS)}
    assert groups["raw.orders"].get("class") == "node node-source"
    assert groups["raw.orders"].get("id") == "n-raw.orders"
    assert groups["mart.facts"].get("class") == "node node-table"
    assert groups["raw.orders.amount"].get("class") == "port"
    assert groups["raw.orders.amount"].get("id") == "p-raw.orders.amount"
    assert groups["raw.orders.amount"] in list(groups["raw.orders"])
    assert groups["raw.orders.amount"].findtext("s:title", namespaces=NS) == "numeric"
    assert "no column lineage" in "".join(groups["mart.facts"].itertext())
    paths = root.findall(".//s:path[@data-source]", NS)
    assert [(p.get("class"), p.get("data-source"), p.get("data-target")) for p in paths] == [
        ("edge edge-copy", "raw.orders.id", "mart.facts.id"),
        ("edge edge-derived", "raw.orders.amount", "mart.facts.id"),
    ]
    marker = root.find(".//s:defs/s:marker", NS)
    assert marker is not None
    assert {p.get("marker-end") for p in paths} == {f"url(#{marker.get('id')})"}


def test_links_wrap_the_header_and_port_labels() -> None:
    root = parse(draw(*lineage()))
    links = {a.get("href"): "".join(a.itertext()) for a in root.iterfind(".//s:a", NS)}
    assert links == {"tables/raw.orders.html": "raw.orders", "tables/mart.facts.html#id": "id"}


def test_edge_paths_run_from_the_source_row_to_the_target_row() -> None:
    nodes, edges = lineage()
    root = parse(draw(nodes, edges))
    rows = {}
    for port in root.iterfind(".//s:g[@class='port']", NS):
        rect = port.find("s:rect", NS)
        assert rect is not None
        top, height = float(rect.get("y", "")), float(rect.get("height", ""))
        rows[port.get("data-id")] = (top, top + height)
    for path in root.iterfind(".//s:path[@data-source]", NS):
        numbers = [float(n) for n in re.findall(r"-?[\d.]+", path.get("d", ""))]
        start_y, end_y = numbers[1], numbers[-1]
        low, high = rows[path.get("data-source")]
        assert low < start_y < high
        low, high = rows[path.get("data-target")]
        assert low < end_y < high
        assert numbers[0] < numbers[-2]  # left to right


def test_copy_and_derived_edges_are_styled_apart_by_the_embedded_style() -> None:
    root = parse(draw(*lineage()))
    style = root.findtext("s:style", namespaces=NS) or ""
    rules = dict(re.findall(r"\.etl-drawing \.(edge-\w+)\{([^}]*)\}", style))
    assert "stroke-dasharray" in rules["edge-derived"]
    assert "stroke-dasharray" not in rules["edge-copy"]
    assert all(line.startswith(".etl-drawing") for line in style.splitlines())  # no page leaks


def test_labels_ids_and_hrefs_are_escaped() -> None:
    port = Port(f"p{HOSTILE}", HOSTILE, href='x.html?a=1&b="2"', title=HOSTILE)
    nodes = [Node(f"n{HOSTILE}", HOSTILE, "table", ports=(port,), badge=HOSTILE, title=HOSTILE)]
    svg = draw(nodes, [Edge(f"n{HOSTILE}", port.id, "copy", title=HOSTILE)], label=HOSTILE)
    assert "<script" not in svg
    root = parse(svg)
    assert root.get("aria-label") == HOSTILE
    group = root.find(".//s:g[@class='node node-table']", NS)
    assert group is not None
    assert (group.get("data-id"), group.get("id")) == (f"n{HOSTILE}", f"n-n{HOSTILE}")
    assert group.findtext("s:title", namespaces=NS) == HOSTILE
    link = root.find(".//s:a", NS)
    assert link is not None
    assert link.get("href") == 'x.html?a=1&b="2"'
    path = root.find(".//s:path[@data-source]", NS)
    assert path is not None
    assert path.get("data-target") == port.id
    assert path.findtext("s:title", namespaces=NS) == HOSTILE


@pytest.mark.parametrize(
    "href", ["javascript:alert(1)", " JavaScript:alert(1)", "java\tscript:x", "data:text/html,x"]
)
def test_script_links_are_refused(href: str) -> None:
    with pytest.raises(ValueError, match="script or data URL"):
        Node("n", "n", "table", href=href)
    with pytest.raises(ValueError, match="script or data URL"):
        Port("p", "p", href=href)


def test_kinds_must_be_a_single_class_name() -> None:
    with pytest.raises(ValueError, match="CSS class suffix"):
        Edge("a", "b", 'copy" onclick="x')


def test_focus_marks_the_node_or_port() -> None:
    nodes, edges = lineage()
    on_port = parse(draw(nodes, edges, focus="raw.orders.amount"))
    focused = on_port.findall(".//s:g[@data-id]", NS)
    assert [g.get("data-id") for g in focused if "focus" in (g.get("class") or "").split()] == [
        "raw.orders.amount"
    ]
    on_node = parse(draw(nodes, edges, focus="mart.facts"))
    group = on_node.find(".//s:g[@data-id='mart.facts']", NS)
    assert group is not None
    assert group.get("class") == "node node-table focus"


def test_the_same_input_draws_the_same_string() -> None:
    first = draw(*lineage(), focus="mart.facts", label="x")
    assert draw(*lineage(), focus="mart.facts", label="x") == first
    assert first.startswith("<svg ")  # no XML prologue: it is embedded in pages


def test_an_empty_graph_says_so() -> None:
    root = parse(draw([], [], label="nothing"))
    assert root.get("aria-label") == "nothing"
    assert "Nothing to draw" in "".join(root.itertext())


def test_a_cut_label_keeps_its_full_text_as_a_tooltip() -> None:
    long = "a_very_long_table_name_that_does_not_fit_" * 3
    root = parse(draw([Node("t", long, "table")], []))
    label = root.findtext(".//s:text[@class='node-label']", namespaces=NS) or ""
    assert label.endswith("…")
    assert len(label) < len(long)
    assert root.findtext(".//s:g[@data-id='t']/s:title", namespaces=NS) == long
