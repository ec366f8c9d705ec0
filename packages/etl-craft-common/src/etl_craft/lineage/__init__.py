"""Column lineage: every SQL task's SELECT traced with sqlglot, stitched by TARGET_OBJECT."""

from etl_craft.lineage.graph import ColumnEdge, Direction, LineageGraph, TaskLineage
from etl_craft.lineage.model import ColumnSource, EdgeKind, OutputColumn, Trace
from etl_craft.lineage.trace import table_key, trace_select

__all__ = [
    "ColumnEdge",
    "ColumnSource",
    "Direction",
    "EdgeKind",
    "LineageGraph",
    "OutputColumn",
    "TaskLineage",
    "Trace",
    "table_key",
    "trace_select",
]
