"""Every guard refuses before the target is touched: its rows and definition stay as they were."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from etl_craft.core.errors import SqlGuardError
from etl_craft.handlers.sql import Action, run_sql_action
from etl_craft.warehouse.connection import WarehouseConnection
from tests.integration.warehouse.helpers import applied, definition, rows, run, spec

WRITERS = [a for a in Action if a is not Action.DROP_TABLE]
KEYED = (Action.SCD1_MERGE, Action.SCD2_MERGE, Action.DELETE_ROWS)
VALUES = "SELECT * FROM (VALUES {}) v(id, val)"


@pytest.fixture
def target(warehouse: WarehouseConnection, schema: str) -> Iterator[str]:
    """An engine-written target; the test checks it is unchanged after the refusal."""
    name = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, name, VALUES.format("(1, 'a')"), history=True)
    run(warehouse, Action.SCD2_MERGE, name, VALUES.format("(1, 'a'), (2, 'b')"), key=("id",))
    before = (rows(warehouse, name, "*"), definition(warehouse, name))
    yield name
    assert (rows(warehouse, name, "*"), definition(warehouse, name)) == before


def refused(
    warehouse: WarehouseConnection,
    action: Action,
    target: str,
    sql: str,
    match: str,
    **options: object,
) -> None:
    request = spec(action, target, sql, **options)  # type: ignore[arg-type]
    with pytest.raises(SqlGuardError, match=match):
        run_sql_action(warehouse, request)
    assert applied(warehouse, request.attempt_id) is None


@pytest.mark.parametrize("action", KEYED)
def test_null_merge_keys(warehouse: WarehouseConnection, target: str, action: Action) -> None:
    sql = VALUES.format("(CAST(NULL AS INTEGER), 'x'), (NULL, 'y'), (3, 'z')")
    refused(
        warehouse,
        action,
        target,
        sql,
        r"returns 2 row\(s\) with a NULL in MERGE_KEY \(id\).*COALESCE",
        key=("id",),
    )


@pytest.mark.parametrize("action", WRITERS)
def test_engine_managed_columns(
    warehouse: WarehouseConnection, target: str, action: Action
) -> None:
    refused(
        warehouse,
        action,
        target,
        f"SELECT * FROM {target}",
        r"(?i)returns ROW_ID, HASH_KEY, .*which etl-craft writes itself",
        key=("id",),
    )


@pytest.mark.parametrize("action", WRITERS)
def test_names_needing_quotes(warehouse: WarehouseConnection, target: str, action: Action) -> None:
    refused(
        warehouse,
        action,
        target,
        'SELECT 1 AS id, 2 AS "my val"',
        'column named "my val", which needs quoting.*AS my_val',
        key=("id",),
    )


def test_mixed_case_follows_folding(warehouse: WarehouseConnection, target: str) -> None:
    sql = 'SELECT 1 AS id, 2 AS "CustomerId"'
    if warehouse.dialect.capabilities.identifier_case is None:
        run(warehouse, Action.CREATE_TABLE, f"{target}_mixed", sql)
        assert [n for n, _ in definition(warehouse, f"{target}_mixed")][:2] == ["id", "customerid"]
        return
    refused(warehouse, Action.CREATE_TABLE, target, sql, "CustomerId.*AS customerid")


@pytest.mark.parametrize("order", ["seq DESC", "seq ASC"])
def test_dedupe_ties_between_differing_rows(
    warehouse: WarehouseConnection, target: str, order: str
) -> None:
    tied = ", ".join(f"({k}, 'a{k}', 1), ({k}, 'b{k}', 1)" for k in range(1, 8))
    sql = f"SELECT * FROM (VALUES {tied}, (9, 'same', 1), (9, 'same', 1)) v(id, val, seq)"
    refused(
        warehouse,
        Action.SCD2_MERGE,
        target,
        sql,
        rf"MERGE_DEDUPE_ORDER \({order}\) leaves ties between differing rows for 7 key\(s\), "
        r"for example id=1, id=2, id=3, id=4, id=5; add a column",
        key=("id",),
        order=order,
    )


def test_differing_duplicates_without_order(warehouse: WarehouseConnection, target: str) -> None:
    refused(
        warehouse,
        Action.SCD1_MERGE,
        target,
        VALUES.format("(1, 'x'), (1, 'y')"),
        r"differing rows for 1 key\(s\).*set MERGE_DEDUPE_ORDER",
        key=("id",),
    )


@pytest.mark.parametrize(
    "action", [a for a in Action if not a.creates and a is not Action.DROP_TABLE]
)
def test_missing_target(warehouse: WarehouseConnection, schema: str, action: Action) -> None:
    refused(
        warehouse,
        action,
        f"{schema}.missing",
        VALUES.format("(1, 'a')"),
        rf"{schema}.missing does not exist; {action} writes only existing tables.*SETUP_TABLE",
        key=("id",),
    )
    assert definition(warehouse, f"{schema}.missing") == []


@pytest.mark.parametrize("action", [Action.SCD1_MERGE, Action.SCD2_MERGE])
def test_float_compare_columns(warehouse: WarehouseConnection, target: str, action: Action) -> None:
    refused(
        warehouse,
        action,
        target,
        "SELECT 1 AS id, CAST(1.5 AS DOUBLE PRECISION) AS val",
        # (?i): Snowflake folds names to upper case and calls the type FLOAT.
        r"(?i)MERGE_COMPARE_COLUMNS includes val \((double precision|double|float)\).*"
        r"cast it to DECIMAL",
        key=("id",),
    )


def test_type_change_refused_naming_both(warehouse: WarehouseConnection, target: str) -> None:
    refused(
        warehouse,
        Action.APPEND_TABLE,
        target,
        "SELECT 1 AS id, 5 AS val",
        # Spark calls the types int and string.
        r"(?i)returns val as (integer|int|number\(38,0\)), but .*\.val is (text|varchar|string)",
        evolve=True,
    )


def test_new_column_needs_schema_evolution(warehouse: WarehouseConnection, target: str) -> None:
    refused(
        warehouse,
        Action.OVERWRITE_TABLE,
        target,
        "SELECT 1 AS id, 'a' AS val, 2 AS extra",
        r"(?i)returns extra \((integer|int|number\(38,0\))\), which .* doesn't have; "
        r"set SCHEMA_EVOLUTION=Y",
    )


@pytest.mark.parametrize(
    ("sql", "match"),
    [
        ("SELECT 1 AS id; SELECT 2 AS id", "2 statements"),
        ("DELETE FROM {target}", "DELETE statement"),
        ("SELECT FROM (", "can't be parsed"),
    ],
)
def test_only_one_read_only_select(
    warehouse: WarehouseConnection, target: str, sql: str, match: str
) -> None:
    refused(warehouse, Action.OVERWRITE_TABLE, target, sql.format(target=target), match)


@pytest.mark.parametrize("action", [Action.SETUP_TABLE, Action.APPEND_TABLE])
def test_trailing_semicolon_and_comment(
    warehouse: WarehouseConnection, target: str, action: Action
) -> None:
    copy = f"{target}_copy"
    run(warehouse, Action.SETUP_TABLE, copy, "SELECT 1 AS id; -- trailing comment")
    run(warehouse, action, copy, "SELECT 2 AS id; -- trailing comment")
    expected = [(2,)] if action is Action.APPEND_TABLE else []
    assert rows(warehouse, copy, "id") == expected
