from __future__ import annotations

import re
from datetime import date

import pytest

from etl_craft.core.errors import MetadataError
from etl_craft.handlers.sql.tokens import TOKEN_DESCRIPTIONS, read_parameters
from etl_craft.warehouse.literals import ParameterKind
from etl_craft.warehouse.substitution import (
    IDENTIFIER_PREFIX,
    PARAMETER_PREFIX,
    TOKEN_NAMES,
    PipelineParameter,
    TokenValues,
    parameters_used,
    placeholders,
    substitute,
    without_terminator,
)

VALUES = TokenValues(7, 70, 700, date(2024, 3, 1), full_refresh=False)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT $$pipeline_id", "SELECT 7"),
        ("SELECT $$pipeline_run_id, $$task_run_id", "SELECT 70, 700"),
        ("WHERE $$pipeline_id_filter", "WHERE pipeline_id = 7"),
        ("WHERE d = $$run_date", "WHERE d = CAST('2024-03-01' AS DATE)"),
        ("SELECT '$$pipeline_id'", "SELECT '$$pipeline_id'"),
        ("SELECT 'it''s $$pipeline_id'", "SELECT 'it''s $$pipeline_id'"),
        ("SELECT E'\\' $$pipeline_id'", "SELECT E'\\' $$pipeline_id'"),
        ('SELECT "$$pipeline_id"', 'SELECT "$$pipeline_id"'),
        ("SELECT 1 -- $$pipeline_id\n, $$pipeline_id", "SELECT 1 -- $$pipeline_id\n, 7"),
        ("SELECT /* $$pipeline_id /* nested */ $$task_run_id */ 1", None),
        ("SELECT $q$ $$pipeline_id $q$, $$pipeline_id", "SELECT $q$ $$pipeline_id $q$, 7"),
        ("SELECT $$text $$pipeline_id$$", "SELECT $$text $$pipeline_id$$"),
        ("SELECT $$pipeline_idx", "SELECT $$pipeline_idx"),
    ],
)
def test_tokens_replaced_only_in_code(sql: str, expected: str | None) -> None:
    assert substitute(sql, VALUES) == (expected if expected is not None else sql)


def test_full_refresh_filter_reads_every_pipeline() -> None:
    full = TokenValues(7, 70, 700, date(2024, 3, 1), full_refresh=True)
    assert substitute("WHERE $$pipeline_id_filter", full) == "WHERE 1 = 1"


def test_terminators_and_trailing_comments() -> None:
    assert without_terminator("SELECT ';' AS x; -- done;\n") == "SELECT ';' AS x -- done;"
    assert without_terminator("SELECT 1;;") == "SELECT 1"


RUN = TokenValues(
    7,
    70,
    700,
    date(2024, 3, 1),
    full_refresh=False,
    pipeline_code="client_a",
    run_key="manual:it's",
    parameters={
        "CLIENT": PipelineParameter("CLIENT", ParameterKind.STRING, "O'Brien'; DROP TABLE t; --"),
        "LIMIT": PipelineParameter("LIMIT", ParameterKind.INT, "-5"),
    },
)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT $$pipeline_code, $$run_key", "SELECT 'client_a', 'manual:it''s'"),
        ("WHERE c = $$param.CLIENT", "WHERE c = 'O''Brien''; DROP TABLE t; --'"),
        # A bare -5 after a minus would start a comment.
        ("SELECT 1 -$$param.LIMIT", "SELECT 1 -(-5)"),
        # Right after a word or a literal, a string would be read as its prefix or its tail.
        ("SELECT E$$param.CLIENT", "SELECT E 'O''Brien''; DROP TABLE t; --'"),
        ("SELECT 'a'$$pipeline_code", "SELECT 'a' 'client_a'"),
        ("SELECT '$$param.CLIENT' -- $$param.CLIENT", "SELECT '$$param.CLIENT' -- $$param.CLIENT"),
        # An undeclared parameter is left as written, for the run to refuse by name.
        ("SELECT $$param.OTHER", "SELECT $$param.OTHER"),
    ],
)
def test_run_tokens_are_literals(sql: str, expected: str) -> None:
    assert substitute(sql, RUN.as_sql("postgres")) == expected


def test_parameters_used_are_those_in_code() -> None:
    sql = "SELECT $$param.B, $$param.A, '$$param.C' /* $$param.D */, $$param.B"
    assert parameters_used(sql) == ("B", "A")


def test_placeholders_are_literals_of_each_type() -> None:
    found = placeholders("duckdb", {"D": ParameterKind.DATE, "N": ParameterKind.INT})
    assert (found["param.D"], found["param.N"], found["pipeline_code"]) == (
        "CAST('2000-01-01' AS DATE)",
        "0",
        "''",
    )


def test_every_token_is_described_for_the_reference() -> None:
    assert set(TOKEN_DESCRIPTIONS) == {
        *TOKEN_NAMES,
        PARAMETER_PREFIX + "NAME",
        IDENTIFIER_PREFIX + "NAME",
    }


NAMES = {
    "LANDING": PipelineParameter("LANDING", ParameterKind.IDENTIFIER, "lnd.Client_A"),
    "AMOUNT": PipelineParameter("AMOUNT", ParameterKind.IDENTIFIER, "order"),
}


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        ("postgres", 'SELECT l."order", \'lnd.Client_A\' FROM "lnd"."client_a" AS l'),
        ("duckdb", 'SELECT l."order", \'lnd.Client_A\' FROM "lnd"."client_a" AS l'),
    ],
)
def test_an_identifier_stands_as_a_quoted_name_and_as_a_string(dialect: str, expected: str) -> None:
    values = TokenValues(7, 70, 700, date(2024, 3, 1), full_refresh=False, parameters=NAMES)
    sql = "SELECT l.$$ident.AMOUNT, $$param.LANDING FROM $$ident.LANDING AS l"

    assert substitute(sql, values.as_sql(dialect)) == expected


@pytest.mark.parametrize(
    ("kind", "value", "refusal"),
    [
        ("STRING", "lnd.a", "has PARAMETER_TYPE STRING; expected IDENTIFIER"),
        ("IDENTIFIER", None, "is NULL; expected a plain name"),
        ("IDENTIFIER", "lnd.a; DROP TABLE t", "which its PARAMETER_TYPE IDENTIFIER can't read"),
        ("IDENTIFIER", 'lnd."a"', "which its PARAMETER_TYPE IDENTIFIER can't read"),
    ],
)
def test_a_name_token_reads_only_a_plain_identifier(
    kind: str, value: str | None, refusal: str
) -> None:
    with pytest.raises(MetadataError, match=re.escape(refusal)) as raised:
        read_parameters("SELECT 1 FROM $$ident.T", "client_a", {"T": value}, {"T": kind}, "it")

    assert "$$ident.T" in str(raised.value)
