"""A failed action leaves its target and the ledger as they were; a committed one is recorded."""

from __future__ import annotations

import pytest

from etl_craft.core.counts import Counts
from etl_craft.core.errors import WarehouseError
from etl_craft.core.time import utc_now
from etl_craft.handlers.sql import Action, run_sql_action
from etl_craft.handlers.sql.spec import DeleteMode
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.ledger import LedgerEntry, ensure_ledger, record
from tests.integration.warehouse.helpers import (
    TASK_RUN_ID,
    applied,
    definition,
    needs_transactions,
    next_attempt,
    requires_ledger_table,
    rows,
    run,
    spec,
)

CLEAN = "SELECT id, CAST(id AS VARCHAR) AS val FROM (VALUES (1), (2), (3), (4)) v(id)"
# Fails on the third row, inside the warehouse, while the SELECT runs.
FAULTY = (
    "SELECT id, CAST(CASE WHEN id = 3 THEN CAST('x' AS INTEGER) END AS VARCHAR) AS val "
    "FROM (VALUES (1), (2), (3), (4)) v(id)"
)
OPTIONS: dict[Action, dict[str, object]] = {
    Action.SCD1_MERGE: {"key": ("id",)},
    Action.SCD2_MERGE: {"key": ("id",)},
    Action.DELETE_ROWS: {"key": ("id",), "delete_mode": DeleteMode.SOFT},
}


def existing_target(warehouse: WarehouseConnection, schema: str, action: Action) -> str:
    target = f"{schema}.t"
    if action is Action.SETUP_TABLE:
        return target  # missing, so SETUP_TABLE has something to create
    first = "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) v(id, val)"
    run(warehouse, Action.SETUP_TABLE, target, first, history=True)
    run(warehouse, Action.SCD2_MERGE, target, first, key=("id",))
    return target


def snapshot(warehouse: WarehouseConnection, target: str) -> object:
    present = definition(warehouse, target)
    return (present, rows(warehouse, target, "*") if present else None)


@pytest.mark.parametrize("action", [a for a in Action if a is not Action.DROP_TABLE])
def test_warehouse_fault_in_the_select(
    warehouse: WarehouseConnection, schema: str, action: Action
) -> None:
    target = existing_target(warehouse, schema, action)
    before = snapshot(warehouse, target)
    request = spec(action, target, FAULTY, **OPTIONS.get(action, {}))  # type: ignore[arg-type]
    if action is Action.SETUP_TABLE and warehouse.dialect.sqlglot_name == "duckdb":
        # SETUP_TABLE stages no rows and DuckDB (also Iceberg's engine) evaluates the CASE per
        # row, so nothing fails:
        # the empty table is created and its ledger row commits with it.
        counts = run_sql_action(warehouse, request)
        assert rows(warehouse, target, "*") == []
        assert applied(warehouse, request.attempt_id) == counts
        return
    # Spark names the failure by its error class, CAST_INVALID_INPUT.
    with pytest.raises(WarehouseError, match="(?i)invalid.input|conversion"):
        run_sql_action(warehouse, request)
    assert snapshot(warehouse, target) == before
    assert applied(warehouse, request.attempt_id) is None


@pytest.mark.parametrize("action", list(Action))
def test_fault_after_every_write_rolls_all_back(
    warehouse: WarehouseConnection, schema: str, action: Action
) -> None:
    """The ledger insert is the last statement: when it fails, no data write survives."""
    requires_ledger_table(warehouse)
    needs_transactions(warehouse)
    target = existing_target(warehouse, schema, action)
    before = snapshot(warehouse, target)
    attempt = next_attempt()
    ensure_ledger(warehouse)
    taken = LedgerEntry(attempt, 1, "OTHER", None, Counts(), utc_now())
    with warehouse.transaction():
        record(warehouse, taken)
    sql = None if action is Action.DROP_TABLE else CLEAN
    request = spec(action, target, sql, attempt_id=attempt, **OPTIONS.get(action, {}))  # type: ignore[arg-type]
    with pytest.raises(WarehouseError, match="(?i)duplicate|constraint"):
        run_sql_action(warehouse, request)
    assert snapshot(warehouse, target) == before
    assert applied(warehouse, attempt) == Counts()


@pytest.mark.parametrize("action", list(Action))
def test_committed_action_has_its_ledger_row(
    warehouse: WarehouseConnection, schema: str, action: Action
) -> None:
    target = existing_target(warehouse, schema, action)
    sql = None if action is Action.DROP_TABLE else CLEAN
    request = spec(action, target, sql, **OPTIONS.get(action, {}))  # type: ignore[arg-type]
    started = utc_now()
    counts = run_sql_action(warehouse, request)
    assert applied(warehouse, request.attempt_id) == counts
    requires_ledger_table(warehouse)
    found = warehouse.fetch_all(
        "read the ledger row",
        "SELECT task_run_id, action, target_object, committed_at FROM etl_craft.attempt_ledger "
        f"WHERE attempt_id = {request.attempt_id}",
    )
    assert [row[:3] for row in found] == [(TASK_RUN_ID, action.value, target)]
    assert found[0][3] >= started


def test_applied_without_a_ledger(warehouse: WarehouseConnection) -> None:
    assert applied(warehouse, next_attempt(), "no_ledger_here") is None
