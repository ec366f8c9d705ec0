from __future__ import annotations

import pytest

from etl_craft.core.errors import MetadataError, SqlGuardError
from etl_craft.warehouse.dialect import Column, TypeKind, type_kind
from etl_craft.warehouse.duckdb import DuckDBDialect
from etl_craft.warehouse.parsing import parse_select
from etl_craft.warehouse.targets import TargetObject


def test_target_forms() -> None:
    assert TargetObject.parse("sales.customers") == TargetObject("sales", "customers")
    assert TargetObject.parse("dw.sales.customers") == TargetObject("sales", "customers", "dw")
    assert TargetObject.parse("dw.sales.customers").sql == "dw.sales.customers"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("customers", "bare table name"),
        ("a.b.c.d", "4 parts"),
        ('sales."my table"', "not a plain identifier"),
        ("sales.1abc", "not a plain identifier"),
    ],
)
def test_bad_targets_refused(text: str, fragment: str) -> None:
    with pytest.raises(MetadataError, match=fragment):
        TargetObject.parse(text)


@pytest.mark.parametrize("dialect", ["postgres", "duckdb"])
def test_one_select_with_output_names(dialect: str) -> None:
    sql = "WITH a AS (SELECT 1 AS x) SELECT x, x + 1 AS y FROM a; -- end\n"
    parsed = parse_select(sql, dialect)
    assert parsed.output_columns == ("x", "y")
    assert parsed.sql == "WITH a AS (SELECT 1 AS x) SELECT x, x + 1 AS y FROM a -- end"
    assert parse_select("SELECT * FROM t", dialect).output_columns is None


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("SELECT 1; SELECT 2", "2 statements"),
        ("DELETE FROM t", "DELETE statement"),
        ("CREATE TABLE x AS SELECT 1", "CREATE statement"),
        ("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "contains DELETE"),
        ("SELECT * INTO x FROM t", "contains INTO"),
        ("SELECT FROM WHERE (", "can't be parsed"),
        ("", "0 statements"),
    ],
)
def test_everything_but_one_select_refused(sql: str, fragment: str) -> None:
    with pytest.raises(SqlGuardError, match=fragment):
        parse_select(sql, "postgres")


def test_type_kinds() -> None:
    assert type_kind("timestamp(3) with time zone") is TypeKind.TIMESTAMP_TZ
    assert type_kind("TIMESTAMP WITH TIME ZONE") is TypeKind.TIMESTAMP_TZ
    assert type_kind("timestamp without time zone") is TypeKind.TIMESTAMP
    assert type_kind("numeric(12,2)") is TypeKind.DECIMAL
    assert type_kind("numeric") is TypeKind.OTHER
    assert type_kind("double precision") is TypeKind.FLOAT


def test_float_compare_column_refused() -> None:
    with pytest.raises(SqlGuardError, match=r"amount \(DOUBLE\).*cast it to DECIMAL"):
        DuckDBDialect().change_hash("s", (Column("amount", "DOUBLE"),))
