from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from etl_craft.warehouse.literals import (
    JsonText,
    ParameterKind,
    read_value,
    sql_literal,
    value_problem,
)

K = ParameterKind


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        (K.STRING, " a'b; ", " a'b; "),
        (K.INT, " -42 ", -42),
        (K.DECIMAL, "12.50", Decimal("12.50")),
        (K.BOOLEAN, "y", True),
        (K.BOOLEAN, "FALSE", False),
        (K.DATE, "2026-01-31", date(2026, 1, 31)),
        (K.JSON, '{"days": 3}', JsonText('{"days": 3}')),
        (K.INT, None, None),
    ],
)
def test_values_read_by_their_type(kind: K, text: str | None, value: object) -> None:
    assert read_value(kind, text) == value


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        (K.INT, "1_000"),
        (K.INT, "4.0"),
        (K.DECIMAL, "NaN"),
        (K.DECIMAL, "1e3"),
        (K.BOOLEAN, "1"),
        (K.DATE, "31/01/2026"),
        (K.JSON, "{days: 3}"),
    ],
)
def test_values_their_type_cannot_read(kind: K, text: str) -> None:
    assert value_problem(kind, text) is not None


@pytest.mark.parametrize("dialect", ["postgres", "duckdb"])
def test_literals_of_each_type(dialect: str) -> None:
    assert sql_literal(K.STRING, "it's; --", dialect) == "'it''s; --'"
    assert sql_literal(K.INT, -3, dialect) == "(-3)"
    assert sql_literal(K.DECIMAL, Decimal("12.50"), dialect) == "12.50"
    assert sql_literal(K.BOOLEAN, True, dialect) == "TRUE"
    assert sql_literal(K.DATE, date(2026, 1, 31), dialect) == "CAST('2026-01-31' AS DATE)"
    assert sql_literal(K.JSON, JsonText("[1]"), dialect) == "CAST('[1]' AS JSON)"
    assert sql_literal(K.DATE, None, dialect) == "CAST(NULL AS DATE)"
