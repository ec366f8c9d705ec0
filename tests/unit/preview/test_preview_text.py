"""The sentence `etl-craft preview` says for each action, from a preview's view."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from etl_craft.cli.actions.preview import render
from etl_craft.core.counts import Counts
from etl_craft.handlers.sql.spec import Action, DeleteMode
from etl_craft.operations.preview import ActionEffect, Preview, PreviewColumn, Refusal

EFFECT = ActionEffect(
    inserted=0,
    updated=0,
    closed=0,
    deleted=0,
    duplicates=0,
    new_keys=None,
    changed_keys=None,
    unchanged_keys=None,
    creates_table=False,
    target_rows_before=5,
    target_rows_after=5,
)
VIEW = Preview(
    project_code="default",
    pipeline_code="sales",
    task_code="load",
    action=Action.APPEND_TABLE,
    target="dm.sales",
    source="sql_files/sales.sql",
    delete_mode=None,
    warehouse="duckdb",
    run_date=date(2026, 12, 3),
    limit=20,
    columns=(PreviewColumn("id", "INTEGER"), PreviewColumn("note", "VARCHAR")),
    rows=((1, None), (2, "x" * 50)),
    source_rows=2,
    duplicate_keys=None,
    counts=Counts(source=2, target=7, inserted=2, updated=0, deleted=0, duplicates=0),
    effect=replace(EFFECT, inserted=2, target_rows_after=7),
    refusal=None,
)


def sentence(view: Preview) -> str:
    return next(line for line in render(view).splitlines() if line.startswith("a run would"))


def test_the_rows_are_a_table_under_the_column_names_with_null_and_long_values_cut() -> None:
    lines = render(VIEW).splitlines()

    assert lines[0] == (
        "sales.load: APPEND_TABLE into dm.sales (duckdb, sql_files/sales.sql, run date 2026-12-03)"
    )
    assert lines[1] == "columns (2): id INTEGER, note VARCHAR"
    assert lines[2] == "rows: 2 of 2 shown (--limit 20)"
    assert lines[3:6] == [
        "  id  note",
        "  1   NULL",
        "  2   " + "x" * 37 + "...",
    ]
    assert lines[-1] == "nothing was written or recorded: the action's transaction was rolled back"


@pytest.mark.parametrize(
    ("action", "effect", "said"),
    [
        (
            Action.APPEND_TABLE,
            {"inserted": 2},
            "insert 2 row(s) into dm.sales; dm.sales would hold",
        ),
        (
            Action.OVERWRITE_TABLE,
            {"inserted": 2, "deleted": 5},
            "delete 5 row(s) and insert 2 row(s) into dm.sales;",
        ),
        (
            Action.CREATE_TABLE,
            {"inserted": 2, "deleted": 5, "creates_table": True},
            "replace dm.sales (5 row(s)) with 2 row(s);",
        ),
        (
            Action.CREATE_TABLE,
            {"inserted": 2, "creates_table": True, "target_rows_before": None},
            "create dm.sales with 2 row(s);",
        ),
        (
            Action.SETUP_TABLE,
            {"creates_table": True, "target_rows_before": None},
            "create dm.sales, empty;",
        ),
        (Action.SETUP_TABLE, {}, "leave dm.sales as it is;"),
        (Action.DROP_TABLE, {"deleted": 5}, "drop dm.sales and its 5 row(s)"),
        (Action.DROP_TABLE, {"target_rows_before": None}, "do nothing: dm.sales doesn't exist"),
        (
            Action.SCD1_MERGE,
            {"inserted": 1, "updated": 2, "unchanged_keys": 3, "duplicates": 1},
            "insert 1 row(s) for new keys, update 2 changed row(s), leave 3 unchanged, and "
            "leave out 1 duplicate row(s);",
        ),
        (
            Action.SCD2_MERGE,
            {"new_keys": 2, "changed_keys": 1, "closed": 1, "unchanged_keys": 3, "deleted": 4},
            "open 2 version(s) for new keys, close 1 and open as many new version(s) for "
            "changed keys, leave 3 unchanged, close 4 key(s) the SELECT no longer returns;",
        ),
    ],
)
def test_each_action_says_what_a_run_would_do(
    action: Action, effect: dict[str, object], said: str
) -> None:
    view = replace(VIEW, action=action, effect=replace(EFFECT, **effect))  # type: ignore[arg-type]

    assert sentence(view).startswith(f"a run would {said}")


def test_a_soft_delete_flags_rows() -> None:
    view = replace(
        VIEW,
        action=Action.DELETE_ROWS,
        delete_mode=DeleteMode.SOFT,
        effect=replace(EFFECT, deleted=2),
    )

    assert sentence(view) == (
        "a run would flag 2 row(s) of dm.sales whose key the SELECT returns; "
        "dm.sales would hold 5 row(s)"
    )


def test_a_refusal_replaces_the_sentence() -> None:
    refusal = Refusal("SQL_GUARD", 21, "the SELECT returns NULL keys")
    text = render(replace(VIEW, counts=None, effect=None, refusal=refusal))

    assert "a run would be refused (SQL_GUARD): the SELECT returns NULL keys" in text
    assert "a run would insert" not in text
