"""Drawing a large graph: 300 tables with up to 8 columns each and 1,500 column and table edges.

Run by hand (never in CI), from the repository root:

    uv run python benchmarks/drawing.py [--nodes 300] [--edges 1500] [--span 30] [--repeat 5]

Edges join random endpoints (a table or one of its columns) from a table to one up to `--span`
tables later, so they cross several layers and make dummy chains. Prints the best and median
time of `layout` and of `draw` (layout and SVG), the layer count, the crossings left and the
size of the SVG.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from etl_craft.drawing import Edge, Node, Port, draw, layout


def graph(nodes: int, edges: int, span: int) -> tuple[list[Node], list[Edge]]:
    rng = random.Random(7)
    tables = [
        Node(
            f"t{i}",
            f"schema.table_{i}",
            "table",
            href=f"tables/t{i}.html",
            ports=tuple(Port(f"t{i}.c{j}", f"column_{j}") for j in range(rng.randint(0, 8))),
        )
        for i in range(nodes)
    ]
    ends = [[table.id, *(port.id for port in table.ports)] for table in tables]
    links = []
    for _ in range(edges):
        source = rng.randrange(nodes - 1)
        target = rng.randrange(source + 1, min(nodes, source + span + 1))
        kind = rng.choice(["copy", "derived"])
        links.append(Edge(rng.choice(ends[source]), rng.choice(ends[target]), kind))
    return tables, links


def timed(repeat: int, call: Callable[[], object]) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=300)
    parser.add_argument("--edges", type=int, default=1500)
    parser.add_argument("--span", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    nodes, edges = graph(options.nodes, options.edges, options.span)
    placed = layout(nodes, edges)
    layers = 1 + max(box.layer for box in placed.boxes)
    for name, call in (
        ("layout", lambda: layout(nodes, edges)),
        ("draw", lambda: draw(nodes, edges)),
    ):
        best, median = timed(options.repeat, call)
        print(f"{name}: best {best * 1000:.0f} ms, median {median * 1000:.0f} ms")
    print(f"{layers} layers, {placed.width:.0f} x {placed.height:.0f} px, ", end="")
    print(f"{len(draw(nodes, edges)):,} characters of SVG")


if __name__ == "__main__":
    main()
