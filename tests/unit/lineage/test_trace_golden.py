"""Golden traces, one per SQL construct, on the PostgreSQL and DuckDB dialects."""

from __future__ import annotations

import pytest

from etl_craft.lineage import EdgeKind, trace_select

COPY, DERIVED = EdgeKind.COPY, EdgeKind.DERIVED
DIALECTS = ("postgres", "duckdb")
KNOWN = {"s.orders": ("id", "customer_id", "amount"), "s.customers": ("id", "name", "tier")}
Sources = dict[str, set[tuple[str, str, EdgeKind]]]

CASES: dict[str, tuple[str, Sources]] = {
    "cte": (
        "WITH big AS (SELECT o.id, o.amount FROM s.orders o WHERE o.amount > 10) "
        "SELECT b.id, b.amount FROM big b",
        {"id": {("s.orders", "id", COPY)}, "amount": {("s.orders", "amount", COPY)}},
    ),
    "subquery": (
        "SELECT x.id, x.doubled FROM (SELECT id, amount * 2 AS doubled FROM s.orders) x",
        {"id": {("s.orders", "id", COPY)}, "doubled": {("s.orders", "amount", DERIVED)}},
    ),
    "union": (
        "SELECT id AS key FROM s.orders UNION ALL SELECT id FROM s.customers",
        {"key": {("s.orders", "id", COPY), ("s.customers", "id", COPY)}},
    ),
    "join": (
        "SELECT o.id, c.name FROM s.orders o JOIN s.customers c ON c.id = o.customer_id",
        {"id": {("s.orders", "id", COPY)}, "name": {("s.customers", "name", COPY)}},
    ),
    "star of a known table": (
        "SELECT * FROM s.customers",
        {
            "id": {("s.customers", "id", COPY)},
            "name": {("s.customers", "name", COPY)},
            "tier": {("s.customers", "tier", COPY)},
        },
    ),
    "rename": (
        "SELECT c.name AS customer_name FROM s.customers c",
        {"customer_name": {("s.customers", "name", COPY)}},
    ),
    "cast": (
        "SELECT CAST(o.amount AS DECIMAL(12, 2)) AS amount FROM s.orders o",
        {"amount": {("s.orders", "amount", COPY)}},
    ),
    "case": (
        "SELECT CASE WHEN c.tier = 'VIP' THEN c.name ELSE 'other' END AS label FROM s.customers c",
        {"label": {("s.customers", "tier", DERIVED), ("s.customers", "name", DERIVED)}},
    ),
    "aggregate": (
        "SELECT o.customer_id, SUM(o.amount) AS total FROM s.orders o GROUP BY o.customer_id",
        {
            "customer_id": {("s.orders", "customer_id", COPY)},
            "total": {("s.orders", "amount", DERIVED)},
        },
    ),
    "window": (
        "SELECT o.id, ROW_NUMBER() OVER (PARTITION BY o.customer_id ORDER BY o.amount) AS rn "
        "FROM s.orders o",
        {
            "id": {("s.orders", "id", COPY)},
            "rn": {("s.orders", "customer_id", DERIVED), ("s.orders", "amount", DERIVED)},
        },
    ),
    "constant": ("SELECT 'x' AS label FROM s.orders", {"label": set()}),
    "count of rows": (
        "SELECT COUNT(*) AS n FROM s.orders o",
        {"n": {("s.orders", "*", DERIVED)}},
    ),
}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_construct_traces_to_its_sources_and_edge_kinds(case: str, dialect: str) -> None:
    sql, expected = CASES[case]

    trace = trace_select(sql, dialect, KNOWN)

    assert trace.problem is None
    assert trace.columns is not None
    found = {c.name: {(s.table, s.column, s.kind) for s in c.sources} for c in trace.columns}
    assert found == expected


def test_quoted_identifiers_keep_their_case_on_postgresql() -> None:
    trace = trace_select(
        'SELECT t."Order Id" AS order_id, t.amount FROM s."Orders" t',
        "postgres",
        {"s.Orders": ("Order Id", "amount")},
    )

    assert trace.reads == ("s.Orders",)
    assert trace.column("order_id") is not None
    assert {(s.table, s.column, s.kind) for s in trace.column("order_id").sources} == {  # type: ignore[union-attr]
        ("s.Orders", "Order Id", COPY)
    }


def test_quoted_identifiers_match_case_insensitively_on_duckdb() -> None:
    trace = trace_select(
        'SELECT t."Order Id" AS order_id FROM s."Orders" t',
        "duckdb",
        {"s.orders": ("order id",)},
    )

    assert trace.reads == ("s.orders",)
    assert {(s.table, s.column, s.kind) for s in trace.column("order_id").sources} == {  # type: ignore[union-attr]
        ("s.orders", "order id", COPY)
    }


@pytest.mark.parametrize("dialect", DIALECTS)
def test_star_of_an_unknown_table_is_untraced_with_the_reason(dialect: str) -> None:
    trace = trace_select("SELECT * FROM s.elsewhere", dialect, KNOWN)

    assert trace.columns is None
    assert trace.reads == ("s.elsewhere",)
    assert trace.problem is not None
    assert "SELECT * reads s.elsewhere" in trace.problem


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_unqualified_column_of_a_join_of_unknown_tables_is_untraced(dialect: str) -> None:
    trace = trace_select("SELECT a FROM s.x JOIN s.y ON s.x.i = s.y.i", dialect)

    assert trace.columns is None
    assert trace.problem is not None
    assert "column a" in trace.problem


def test_sql_that_does_not_parse_is_untraced_with_the_parser_reason() -> None:
    trace = trace_select("SELECT FROM WHERE (", "postgres")

    assert trace.columns is None
    assert trace.problem is not None
    assert trace.problem.startswith("sqlglot can't")
