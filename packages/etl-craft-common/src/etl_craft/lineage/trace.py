"""Trace one SELECT column by column with sqlglot's qualify, scope and lineage machinery."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.lineage import Node, to_node
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope
from sqlglot.schema import MappingSchema

from etl_craft.lineage.model import ROWS, ColumnSource, EdgeKind, OutputColumn, Trace

# Known columns of tables by table_key; their types play no part in lineage.
KnownColumns = Mapping[str, tuple[str, ...]]
_ANY_TYPE = "TEXT"


def table_key(name: str | exp.Table, dialect: str) -> str:
    """A table's name as the warehouse resolves it: unquoted parts folded, quoted kept."""
    table = exp.to_table(name, dialect=dialect) if isinstance(name, str) else name.copy()
    table = normalize_identifiers(table, dialect=dialect)
    return ".".join(part.name for part in table.parts)


def column_key(name: str, dialect: str, *, quoted: bool = True) -> str:
    """A column name the warehouse reports (``quoted``), or one created unquoted, as the dialect
    matches it."""
    return normalize_identifiers(exp.to_identifier(name, quoted=quoted), dialect=dialect).name


def tables_read(sql: str, dialect: str) -> tuple[str, ...]:
    """Every table a SELECT reads (CTEs aside), without tracing its columns."""
    return _plain_reads(sqlglot.parse_one(sql, read=dialect), dialect)


def trace_select(sql: str, dialect: str, known: KnownColumns | None = None) -> Trace:
    """Where each output column comes from; a Trace with its problem when it can't be told."""
    try:
        query = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError as error:
        return Trace((), None, f"sqlglot can't parse it as {dialect} SQL: {first_line(error)}")
    schema = _schema(known or {}, dialect)
    try:
        qualified = qualify(
            query, schema=schema, dialect=dialect, validate_qualify_columns=False, identify=False
        )
        _attribute_lone_tables(qualified)
        root = build_scope(qualified)
    except SqlglotError as error:
        reason = f"sqlglot can't resolve its names: {first_line(error)}"
        return Trace(_plain_reads(query, dialect), None, reason)
    if root is None or not isinstance(qualified, exp.Query):
        return Trace((), None, "it is not a query sqlglot can scope")
    reads = _reads(root, dialect)
    problem = _unresolved(root, reads, known or {})
    if problem is not None:
        return Trace(reads, None, problem)
    ctes = frozenset(cte.alias for cte in qualified.find_all(exp.CTE))
    try:
        columns = tuple(
            OutputColumn(
                name,
                _sources(to_node(name, root, dialect, schema, trim_selects=False), dialect, ctes),
            )
            for name in qualified.named_selects
        )
    except SqlglotError as error:
        return Trace(reads, None, f"sqlglot can't trace a column: {first_line(error)}")
    return Trace(reads, columns)


def _schema(known: KnownColumns, dialect: str) -> MappingSchema:
    mapping: dict[str, object] = {}
    for key, columns in known.items():
        parts = key.split(".")
        if len(parts) < 2 or not columns:
            continue
        # Two-part names (schema.table) are what TARGET_OBJECT holds; a catalog is dropped.
        tables = mapping.setdefault(parts[-2], {})
        assert isinstance(tables, dict)
        tables[parts[-1]] = dict.fromkeys(columns, _ANY_TYPE)
    return MappingSchema(mapping, dialect=dialect, normalize=False)


def _attribute_lone_tables(query: exp.Expr) -> None:
    """Give an unqualified column the one table of its FROM, whose columns are not known.

    qualify attributes a column only through the schema; a query over a single table the
    project knows nothing about still says plainly where each of its columns comes from.
    """
    root = build_scope(query)
    for scope in root.traverse() if root is not None else ():
        if len(scope.selected_sources) != 1:
            continue
        alias, (_, source) = next(iter(scope.selected_sources.items()))
        if not isinstance(source, exp.Table):
            continue
        for column in scope.columns:
            if not column.table:
                column.set("table", exp.to_identifier(alias))


def _plain_reads(query: exp.Expr, dialect: str) -> tuple[str, ...]:
    """The tables of a SELECT whose columns can't be resolved: its reads still order it."""
    try:
        root = build_scope(query)
    except SqlglotError:
        return ()
    return () if root is None else _reads(root, dialect)


def _reads(root: Scope, dialect: str) -> tuple[str, ...]:
    found = {
        table_key(source, dialect)
        for scope in root.traverse()
        for source in scope.sources.values()
        if isinstance(source, exp.Table)
    }
    return tuple(sorted(found))


def _unresolved(root: Scope, reads: tuple[str, ...], known: KnownColumns) -> str | None:
    for scope in root.traverse():
        if not isinstance(scope.expression, exp.Select):
            continue
        for select in scope.expression.selects:
            if isinstance(select, exp.Star) or (isinstance(select, exp.Column) and select.is_star):
                unknown = [t for t in reads if t not in known] or list(reads)
                return (
                    f"SELECT * reads {', '.join(unknown)}, whose columns are unknown; list the "
                    "columns, or let a task of this project write the table first"
                )
            for column in select.find_all(exp.Column):
                if not column.table:
                    return (
                        f"column {column.sql(dialect='')} can't be told apart between the "
                        "tables of its FROM; qualify it with its table's alias"
                    )
    return None


def _sources(node: Node, dialect: str, ctes: frozenset[str]) -> tuple[ColumnSource, ...]:
    kinds: dict[tuple[str, str], EdgeKind] = {}
    for table, column, kind in _leaves(node, EdgeKind.COPY, dialect, ctes):
        seen = kinds.get((table, column))
        # A source reached both as it is and computed counts as derived.
        kinds[(table, column)] = EdgeKind.DERIVED if EdgeKind.DERIVED in (seen, kind) else kind
    return tuple(ColumnSource(t, c, k) for (t, c), k in sorted(kinds.items()))


def _leaves(
    node: Node, kind: EdgeKind, dialect: str, ctes: frozenset[str]
) -> Iterator[tuple[str, str, EdgeKind]]:
    if isinstance(node.expression, exp.Table):
        column = sqlglot.parse_one(node.name, read=dialect)
        yield table_key(node.expression, dialect), column.name, kind
        return
    if not isinstance(node.source, exp.SetOperation) and not _is_copy(node.expression):
        kind = EdgeKind.DERIVED
        yield from _counted_rows(node, dialect, ctes)
    for child in node.downstream:
        yield from _leaves(child, kind, dialect, ctes)


def _counted_rows(
    node: Node, dialect: str, ctes: frozenset[str]
) -> Iterator[tuple[str, str, EdgeKind]]:
    """COUNT(*) reads no column but every row: its source is the table's rows, named `*`."""
    if not isinstance(node.source, exp.Select) or node.expression.find(exp.Star) is None:
        return
    joins = [node.source.args.get("from_"), *(node.source.args.get("joins") or ())]
    for part in joins:
        table = part.this if part is not None else None
        if isinstance(table, exp.Table) and not (table.db == "" and table.name in ctes):
            yield table_key(table, dialect), ROWS, EdgeKind.DERIVED


def _is_copy(expression: exp.Expr) -> bool:
    while isinstance(expression, exp.Alias | exp.Paren | exp.Cast | exp.TryCast):
        expression = expression.this
    return isinstance(expression, exp.Column)


def first_line(error: Exception) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0]
