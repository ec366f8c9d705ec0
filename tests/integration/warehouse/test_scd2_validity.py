"""SCD2_MERGE's refusals of validity that goes backwards, and the closing columns and key
counts an older target or ledger gets, on both warehouses."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from etl_craft.core.errors import SqlGuardError
from etl_craft.handlers.sql import Action
from etl_craft.handlers.sql.spec import MissingKeys, ValidFrom
from etl_craft.warehouse.audit import CLOSING_COLUMNS
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.ledger import ledger_table
from etl_craft.warehouse.statements import count_rows
from tests.integration.warehouse.helpers import definition, rows, run, table

COLUMNS = "id INTEGER, name VARCHAR(10), changed_at TIMESTAMP WITH TIME ZONE"
BY_TIME: dict[str, Any] = {
    "key": ("id",),
    "valid_from": ValidFrom.COLUMN,
    "valid_from_column": "changed_at",
}


def at(hour: int) -> str:
    return f"CAST('2024-05-01 {hour:02d}:00:00+00' AS TIMESTAMP WITH TIME ZONE)"


def history(conn: WarehouseConnection, schema: str, values: str) -> tuple[str, str]:
    """A source holding ``values`` and the history target an SCD2_MERGE of it writes."""
    table(conn, f"{schema}.src", COLUMNS, values)
    source = f"SELECT id, name, changed_at FROM {schema}.src"
    run(conn, Action.SETUP_TABLE, f"{schema}.h", source, history=True)
    return source, f"{schema}.h"


def replace_source(conn: WarehouseConnection, schema: str, values: str) -> None:
    conn.execute("empty the source", f"DELETE FROM {schema}.src")
    conn.execute("fill the source", f"INSERT INTO {schema}.src VALUES {values}")


@pytest.mark.parametrize("hour", [9, 10], ids=["earlier", "same-time"])
def test_a_change_not_later_than_the_current_version_is_refused(
    warehouse: WarehouseConnection, schema: str, hour: int
) -> None:
    source, target = history(warehouse, schema, f"(1, 'a', {at(10)}), (2, 'b', {at(10)})")
    run(warehouse, Action.SCD2_MERGE, target, source, **BY_TIME)
    before = rows(warehouse, target, "id, name, ACTIVE_FLAG, VALID_FROM, VALID_TO")
    replace_source(warehouse, schema, f"(1, 'a2', {at(hour)}), (2, 'b', {at(10)})")

    with pytest.raises(SqlGuardError, match=r"goes backwards for 1 key\(s\).*id=1 would open"):
        run(warehouse, Action.SCD2_MERGE, target, source, **BY_TIME)

    assert rows(warehouse, target, "id, name, ACTIVE_FLAG, VALID_FROM, VALID_TO") == before


def test_a_returning_key_earlier_than_its_closing_is_refused(
    warehouse: WarehouseConnection, schema: str
) -> None:
    options = BY_TIME | {"missing_keys": MissingKeys.CLOSE}
    source, target = history(warehouse, schema, f"(1, 'a', {at(8)}), (2, 'b', {at(8)})")
    run(warehouse, Action.SCD2_MERGE, target, source, **options)
    replace_source(warehouse, schema, f"(2, 'b2', {at(12)})")
    run(warehouse, Action.SCD2_MERGE, target, source, **options)  # closes key 1 at 12:00
    replace_source(warehouse, schema, f"(1, 'a', {at(11)}), (2, 'b2', {at(12)})")

    with pytest.raises(SqlGuardError, match=r"id=1 would open a version at 2024-05-01 11:00"):
        run(warehouse, Action.SCD2_MERGE, target, source, **options)


def test_missing_keys_the_snapshot_predates_are_refused(
    warehouse: WarehouseConnection, schema: str
) -> None:
    options = BY_TIME | {"missing_keys": MissingKeys.NEW_RECORD}
    source, target = history(warehouse, schema, f"(1, 'a', {at(8)}), (2, 'b', {at(14)})")
    run(warehouse, Action.SCD2_MERGE, target, source, **options)
    replace_source(warehouse, schema, f"(1, 'a', {at(8)})")  # its latest change: 08:00

    with pytest.raises(SqlGuardError, match=r"id=2 started at 2024-05-01 14:00"):
        run(warehouse, Action.SCD2_MERGE, target, source, **options)

    assert rows(warehouse, target, "id, ACTIVE_FLAG, DELETE_FLAG") == [(1, "Y", "N"), (2, "Y", "N")]


def test_a_null_change_time_is_refused(warehouse: WarehouseConnection, schema: str) -> None:
    source, target = history(warehouse, schema, f"(1, 'a', {at(8)}), (2, 'b', NULL)")

    with pytest.raises(SqlGuardError, match=r"1 key\(s\) whose SCD2_VALID_FROM_COLUMN changed_at"):
        run(warehouse, Action.SCD2_MERGE, target, source, **BY_TIME)

    assert rows(warehouse, target, "id") == []


def test_a_backfill_of_an_earlier_run_date_is_refused(
    warehouse: WarehouseConnection, schema: str
) -> None:
    options: dict[str, Any] = {"key": ("id",), "valid_from": ValidFrom.RUN_DATE}
    source, target = history(warehouse, schema, f"(1, 'a', {at(8)})")
    run(warehouse, Action.SCD2_MERGE, target, source, run_date=date(2024, 5, 2), **options)
    replace_source(warehouse, schema, f"(1, 'a2', {at(8)})")

    with pytest.raises(SqlGuardError, match=r"SCD2_VALID_FROM \(RUN_DATE\) goes backwards"):
        run(warehouse, Action.SCD2_MERGE, target, source, run_date=date(2024, 5, 1), **options)

    counts = run(warehouse, Action.SCD2_MERGE, target, source, run_date=date(2024, 5, 3), **options)
    assert (counts.changed_keys, counts.new_keys, counts.unchanged_keys) == (1, 0, 0)
    assert [str(v.date()) for (v,) in rows(warehouse, target, "VALID_FROM")] == [
        "2024-05-02",
        "2024-05-03",
    ]


def drop_closing_columns(conn: WarehouseConnection, target: str) -> None:
    """Make the target look created before SCD2 recorded the closing run."""
    for column in CLOSING_COLUMNS:
        conn.execute("drop a column", f"ALTER TABLE {target} DROP COLUMN {column.name}")


def closing(conn: WarehouseConnection, target: str) -> list[tuple[Any, ...]]:
    return rows(
        conn,
        target,
        "name, PIPELINE_RUN_ID, TASK_RUN_ID, CLOSED_PIPELINE_RUN_ID, CLOSED_TASK_RUN_ID",
    )


def test_an_older_history_target_gets_the_closing_columns(
    warehouse: WarehouseConnection, schema: str
) -> None:
    source, target = history(warehouse, schema, "(1, 'a', NULL)")
    first = {"pipeline_run_id": 5, "task_run_id": 50, "key": ("id",)}
    run(warehouse, Action.SCD2_MERGE, target, source, **first)
    drop_closing_columns(warehouse, target)
    replace_source(warehouse, schema, "(1, 'a2', NULL)")

    second = {"pipeline_run_id": 6, "task_run_id": 60, "key": ("id",)}
    run(warehouse, Action.SCD2_MERGE, target, source, **second)

    assert closing(warehouse, target) == [("a", 5, 50, 6, 60), ("a2", 6, 60, None, None)]
    drop_closing_columns(warehouse, target)
    run(warehouse, Action.SETUP_TABLE, target, source, history=True)
    names = [name for name, _ in definition(warehouse, target)]
    assert names[-2:] == ["closed_pipeline_run_id", "closed_task_run_id"]


def test_an_older_ledger_gets_the_key_count_columns(
    warehouse: WarehouseConnection, schema: str
) -> None:
    source, target = history(warehouse, schema, "(1, 'a', NULL), (2, 'b', NULL)")
    ledger = ledger_table().sql
    for name in ("new_key_count", "changed_key_count", "unchanged_key_count"):
        warehouse.execute("drop a ledger column", f"ALTER TABLE {ledger} DROP COLUMN {name}")

    # run() also checks that the ledger recorded exactly the counts returned.
    counts = run(warehouse, Action.SCD2_MERGE, target, source, key=("id",))

    assert (counts.new_keys, counts.changed_keys, counts.unchanged_keys) == (2, 0, 0)
    assert warehouse.fetch_value("count", count_rows(target).sql) == 2
