"""lineage: the project's column lineage, built from stored traces, and walks along it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.core.errors import NotFoundError
from etl_craft.enginedb.lineage import StoredTrace, record_traces, stored_traces
from etl_craft.enginedb.metadata import ProjectMetadata, read_project_metadata
from etl_craft.lineage import ColumnEdge, Direction, LineageGraph, table_key
from etl_craft.lineage.build import LineageBuild, build_lineage, source_tables
from etl_craft.lineage.graph import TableEdge
from etl_craft.lineage.trace import column_key
from etl_craft.operations.context import OperationContext
from etl_craft.operations.project_files import files_if_reachable
from etl_craft.warehouse import SQL_DIALECTS, TargetObject, connect
from etl_craft.warehouse.dialect import Column


@dataclass(frozen=True)
class UntracedTask:
    pipeline_code: str
    task_code: str
    target: str | None
    reason: str


@dataclass(frozen=True)
class LineageSummary:
    schema: ClassVar[str] = "etl-craft/lineage/1"
    project: str
    tables: int
    columns: int
    tasks: int
    traced: int  # SELECTs parsed by this build
    reused: int  # SELECTs whose stored trace still held
    table_edges: tuple[TableEdge, ...]
    untraced: tuple[UntracedTask, ...]


@dataclass(frozen=True)
class LineagePath:
    schema: ClassVar[str] = "etl-craft/lineage-path/1"
    project: str
    table: str
    column: str | None
    direction: Direction
    depth: int | None
    tables: tuple[TableEdge, ...]  # table-level edges of the walk (empty for a column walk)
    columns: tuple[ColumnEdge, ...]  # column-level edges of a column walk
    untraced: tuple[UntracedTask, ...]  # tasks on the way whose SELECT could not be traced


def sql_dialect(ctx: OperationContext) -> str:
    return SQL_DIALECTS[ctx.connector.warehouse.type if ctx.connector else WarehouseType.DUCKDB]


def project_lineage(ctx: OperationContext, *, with_warehouse: bool = False) -> LineageBuild:
    """Build the lineage, storing the traces that changed so that the next build reuses them.

    With ``with_warehouse``, the columns of tables no task writes are read from the warehouse,
    so that a ``SELECT *`` of them is traced too.
    """
    dialect = sql_dialect(ctx)
    with ctx.engine.read() as conn:
        metadata = read_project_metadata(conn, ctx.project_code)
        stored = stored_traces(conn, metadata.project_id)
    known: dict[str, tuple[str, ...]] = {}
    # Another project's warehouse is not this configuration's: its stored traces stand alone.
    if with_warehouse and ctx.connector is not None and ctx.acts_on_own_project:
        tables = source_tables(metadata, ctx.project, dialect, stored=stored)
        found = read_warehouse_columns(ctx.connector.warehouse, tables)
        known = known_columns(found, dialect)
    return stored_lineage(ctx, metadata, stored, known)


def stored_lineage(
    ctx: OperationContext,
    metadata: ProjectMetadata,
    stored: Mapping[int, StoredTrace],
    known: Mapping[str, tuple[str, ...]],
) -> LineageBuild:
    """The lineage built from stored traces where they still hold; the others are stored."""
    build = build_lineage(
        metadata, files_if_reachable(ctx), sql_dialect(ctx), stored=stored, warehouse_columns=known
    )
    if build.changed:
        with ctx.engine.transaction(ctx.actor) as conn:
            record_traces(conn, build.changed, ctx.actor)
    return build


def read_warehouse_columns(
    settings: Warehouse, tables: Iterable[str]
) -> dict[str, tuple[Column, ...]]:
    """The columns (names and types) of each table the warehouse has; absent tables are left out."""
    with connect(settings) as conn:
        found = {t: conn.columns(TargetObject.parse(t)) for t in tables}
    return {t: cs for t, cs in found.items() if cs}


def known_columns(
    found: Mapping[str, tuple[Column, ...]], dialect: str
) -> dict[str, tuple[str, ...]]:
    return {t: tuple(column_key(c.name, dialect) for c in cs) for t, cs in found.items()}


def lineage_summary(ctx: OperationContext, *, with_warehouse: bool = False) -> LineageSummary:
    build = project_lineage(ctx, with_warehouse=with_warehouse)
    graph = build.graph
    return LineageSummary(
        project=ctx.project_code,
        tables=len(graph.tables()),
        columns=sum(len(graph.columns_of(t)) for t in graph.tables()),
        tasks=len(graph.tasks),
        traced=build.traced,
        reused=build.reused,
        table_edges=graph.table_edges(),
        untraced=untraced_tasks(graph, None),
    )


def lineage_path(
    ctx: OperationContext,
    table: str,
    column: str | None,
    direction: Direction,
    depth: int | None = None,
    *,
    with_warehouse: bool = False,
) -> LineagePath:
    graph = project_lineage(ctx, with_warehouse=with_warehouse).graph
    key = table_key(table, sql_dialect(ctx))
    if key not in graph.tables():
        known = ", ".join(graph.tables()) or "none"
        raise NotFoundError(
            f"table {table!r} is neither written nor read by an active task of project "
            f"{ctx.project_code}; expected one of: {known}; check --table"
        )
    if column is not None and column.lower() not in {c.lower() for c in graph.columns_of(key)}:
        known = ", ".join(graph.columns_of(key)) or "none known"
        raise NotFoundError(
            f"column {column!r} of {key} is not in its lineage; expected one of: {known}; "
            "check --column"
        )
    tables = graph.walk_tables(key, direction, depth) if column is None else ()
    columns = graph.walk_column(key, column, direction, depth) if column is not None else ()
    on_way = {e.task for e in tables} | {e.task for e in columns}
    reached = {e.source for e in tables} | {e.target for e in tables} | {key}
    return LineagePath(
        project=ctx.project_code,
        table=key,
        column=column,
        direction=direction,
        depth=depth,
        tables=tables,
        columns=columns,
        untraced=untraced_tasks(graph, on_way | _writers(graph, reached)),
    )


def _writers(graph: LineageGraph, tables: set[str]) -> set[str]:
    return {task.name for table in tables for task in graph.writers(table)}


def untraced_tasks(graph: LineageGraph, names: set[str] | None) -> tuple[UntracedTask, ...]:
    return tuple(
        UntracedTask(t.pipeline_code, t.task_code, t.target, t.problem or "")
        for t in graph.untraced()
        if names is None or t.name in names
    )
