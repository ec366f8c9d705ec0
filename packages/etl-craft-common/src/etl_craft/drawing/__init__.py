"""Layered drawings of directed graphs as self-contained SVG: lineage and pipeline DAGs.

Pure: no I/O. `draw` lays the graph out (see `layout`) and returns one `<svg>` element.

The layout is written here rather than taken from a library: the one pure-Python layered
layout on PyPI, grandalf, last released in 2023 and has no notion of ports, and lineage needs
edges to attach to, and be ordered by, the column rows nested in each table. networkx has no
layered layout. The Sugiyama steps it needs are short: cycle breaking, longest-path layers,
dummy points for long edges, barycenter crossing reduction and packed coordinates.
"""

from etl_craft.drawing.layout import Box, Layout, Route, layout
from etl_craft.drawing.model import Edge, Node, Port
from etl_craft.drawing.svg import draw

__all__ = ["Box", "Edge", "Layout", "Node", "Port", "Route", "draw", "layout"]
