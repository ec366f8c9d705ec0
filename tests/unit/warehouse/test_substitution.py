from __future__ import annotations

from datetime import date

import pytest

from etl_craft.warehouse.substitution import TokenValues, substitute, without_terminator

VALUES = TokenValues(7, 70, 700, date(2024, 3, 1), full_refresh=False)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT $$pipeline_id", "SELECT 7"),
        ("SELECT $$pipeline_run_id, $$task_run_id", "SELECT 70, 700"),
        ("WHERE $$pipeline_id_filter", "WHERE pipeline_id = 7"),
        ("WHERE d = $$run_date", "WHERE d = DATE '2024-03-01'"),
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
