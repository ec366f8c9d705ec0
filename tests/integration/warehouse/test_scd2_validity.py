"""SCD2_MERGE's validity that goes backwards: refused from the run date or clock, settled by
SCD2_STALE_ROWS from a source column; empty snapshots; and the closing columns and key counts an
older target or ledger gets, on both warehouses."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest

from etl_craft.core.counts import Counts
from etl_craft.core.errors import SqlGuardError
from etl_craft.handlers.sql import Action
from etl_craft.handlers.sql.spec import MissingKeys, StaleRows, ValidFrom
from etl_craft.warehouse.audit import CLOSING_COLUMNS
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.ledger import ledger_table
from etl_craft.warehouse.statements import count_rows
from tests.integration.warehouse.helpers import (
    definition,
    needs_drop_column,
    requires_ledger_table,
    rows,
    run,
    table,
)

COLUMNS = "id INTEGER, name VARCHAR(10), changed_at TIMESTAMP WITH TIME ZONE"
BY_TIME: dict[str, Any] = {
    "key": ("id",),
    "valid_from": ValidFrom.COLUMN,
    "valid_from_column": "changed_at",
}
REFUSING = BY_TIME | {"stale_rows": StaleRows.REFUSE}
WAY_PAST = r".*set SCD2_STALE_ROWS = IGNORE on the task"


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
    if values:
        conn.execute("fill the source", f"INSERT INTO {schema}.src VALUES {values}")


def hour(value: object) -> int | None:
    assert value is None or isinstance(value, datetime)
    return None if value is None else value.astimezone(UTC).hour


def versions(conn: WarehouseConnection, target: str) -> list[tuple[Any, ...]]:
    """(id, name, VALID_FROM hour, VALID_TO hour, ACTIVE_FLAG, DELETE_FLAG) per version."""
    found = rows(conn, target, "id, name, VALID_FROM, VALID_TO, ACTIVE_FLAG, DELETE_FLAG")
    listed = [(row[0], row[1], hour(row[2]), hour(row[3]), *row[4:]) for row in found]
    return sorted(listed, key=lambda version: (version[0], version[2]))


def timings(counts: Counts) -> tuple[int | None, ...]:
    return (counts.same_time_keys, counts.stale_keys, counts.reopened_keys)


@pytest.mark.parametrize(
    ("hour_", "counted"), [(10, (1, 0, 0)), (9, (0, 1, 0))], ids=["same-time", "earlier"]
)
def test_a_change_not_later_than_the_current_version_is_left_counted_and_logged(
    warehouse: WarehouseConnection,
    schema: str,
    hour_: int,
    counted: tuple[int, ...],
    caplog: pytest.LogCaptureFixture,
) -> None:
    source, target = history(warehouse, schema, f"(1, 'a', {at(10)}), (2, 'b', {at(10)})")
    run(warehouse, Action.SCD2_MERGE, target, source, **BY_TIME)
    replace_source(warehouse, schema, f"(1, 'a2', {at(hour_)}), (2, 'b2', {at(11)})")

    counts = run(warehouse, Action.SCD2_MERGE, target, source, **BY_TIME)

    assert versions(warehouse, target) == [
        (1, "a", 10, None, "Y", "N"),
        (2, "b", 10, 11, "N", "N"),
        (2, "b2", 11, None, "Y", "N"),
    ]
    assert timings(counts) == counted
    assert (counts.new_keys, counts.changed_keys, counts.unchanged_keys) == (0, 1, 1)
    assert f"id=1 at 2024-05-01 {hour_:02d}:00" in caplog.text
    replace_source(warehouse, schema, f"(1, 'a3', {at(12)}), (2, 'b2', {at(11)})")
    counts = run(warehouse, Action.SCD2_MERGE, target, source, **BY_TIME)
    assert versions(warehouse, target)[:2] == [
        (1, "a", 10, 12, "N", "N"),
        (1, "a3", 12, None, "Y", "N"),
    ]
    assert timings(counts) == (0, 0, 0)


@pytest.mark.parametrize("hour_", [9, 10], ids=["earlier", "same-time"])
def test_refuse_keeps_refusing_a_change_not_later_than_the_current_version(
    warehouse: WarehouseConnection, schema: str, hour_: int
) -> None:
    source, target = history(warehouse, schema, f"(1, 'a', {at(10)}), (2, 'b', {at(10)})")
    run(warehouse, Action.SCD2_MERGE, target, source, **REFUSING)
    before = rows(warehouse, target, "id, name, ACTIVE_FLAG, VALID_FROM, VALID_TO")
    replace_source(warehouse, schema, f"(1, 'a2', {at(hour_)}), (2, 'b2', {at(11)})")

    with pytest.raises(SqlGuardError, match=r"REFUSE.*1 key\(s\) whose .*: id=1 at " + WAY_PAST):
        run(warehouse, Action.SCD2_MERGE, target, source, **REFUSING)

    assert rows(warehouse, target, "id, name, ACTIVE_FLAG, VALID_FROM, VALID_TO") == before


def close_key_one(conn: WarehouseConnection, schema: str, mode: MissingKeys) -> tuple[str, str]:
    """Keys 1 and 2 from 08:00; then a snapshot without key 1 closes it at 12:00."""
    options = BY_TIME | {"missing_keys": mode}
    source, target = history(conn, schema, f"(1, 'a', {at(8)}), (2, 'b', {at(8)})")
    run(conn, Action.SCD2_MERGE, target, source, **options)
    replace_source(conn, schema, f"(2, 'b2', {at(12)})")
    run(conn, Action.SCD2_MERGE, target, source, **options)
    return source, target


@pytest.mark.parametrize("mode", [MissingKeys.CLOSE, MissingKeys.NEW_RECORD])
def test_a_returning_key_earlier_than_its_closing_reopens_at_the_batch_time(
    warehouse: WarehouseConnection, schema: str, mode: MissingKeys
) -> None:
    source, target = close_key_one(warehouse, schema, mode)
    replace_source(warehouse, schema, f"(1, 'a', {at(8)}), (2, 'b3', {at(13)})")

    counts = run(warehouse, Action.SCD2_MERGE, target, source, **BY_TIME, missing_keys=mode)

    deletion = [(1, "a", 12, 13, "N", "Y")] if mode is MissingKeys.NEW_RECORD else []
    assert versions(warehouse, target)[: 2 + len(deletion)] == [
        (1, "a", 8, 12, "N", "N"),
        *deletion,
        (1, "a", 13, None, "Y", "N"),
    ]
    assert timings(counts) == (0, 0, 1)
    assert (counts.new_keys, counts.changed_keys, counts.unchanged_keys) == (1, 1, 0)


def test_a_returning_key_no_later_than_its_deletion_waits_for_a_later_batch(
    warehouse: WarehouseConnection, schema: str
) -> None:
    options = BY_TIME | {"missing_keys": MissingKeys.NEW_RECORD}
    source, target = close_key_one(warehouse, schema, MissingKeys.NEW_RECORD)
    replace_source(warehouse, schema, f"(1, 'a', {at(8)}), (2, 'b2', {at(12)})")

    counts = run(warehouse, Action.SCD2_MERGE, target, source, **options)

    assert versions(warehouse, target)[:2] == [
        (1, "a", 8, 12, "N", "N"),
        (1, "a", 12, None, "Y", "Y"),
    ]
    assert timings(counts) == (0, 1, 0)
    replace_source(warehouse, schema, f"(1, 'a', {at(8)}), (2, 'b2', {at(12)}), (3, 'c', {at(14)})")
    counts = run(warehouse, Action.SCD2_MERGE, target, source, **options)
    assert versions(warehouse, target)[1:3] == [
        (1, "a", 12, 14, "N", "Y"),
        (1, "a", 14, None, "Y", "N"),
    ]
    assert timings(counts) == (0, 0, 1)


def test_refuse_keeps_refusing_a_returning_key_earlier_than_its_closing(
    warehouse: WarehouseConnection, schema: str
) -> None:
    source, target = close_key_one(warehouse, schema, MissingKeys.CLOSE)
    before = versions(warehouse, target)
    replace_source(warehouse, schema, f"(1, 'a', {at(11)}), (2, 'b2', {at(12)})")

    with pytest.raises(
        SqlGuardError, match=r"returning key\(s\).*id=1 at 2024-05-01 11:00" + WAY_PAST
    ):
        run(
            warehouse, Action.SCD2_MERGE, target, source, **REFUSING, missing_keys=MissingKeys.CLOSE
        )

    assert versions(warehouse, target) == before


def test_missing_keys_the_snapshot_predates_stay_current_until_a_later_batch(
    warehouse: WarehouseConnection, schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    options = BY_TIME | {"missing_keys": MissingKeys.NEW_RECORD}
    source, target = history(warehouse, schema, f"(1, 'a', {at(8)}), (2, 'b', {at(14)})")
    run(warehouse, Action.SCD2_MERGE, target, source, **options)
    replace_source(warehouse, schema, f"(1, 'a', {at(8)})")  # its latest change: 08:00

    counts = run(warehouse, Action.SCD2_MERGE, target, source, **options)

    assert versions(warehouse, target) == [
        (1, "a", 8, None, "Y", "N"),
        (2, "b", 14, None, "Y", "N"),
    ]
    assert timings(counts) == (0, 1, 0)
    assert "id=2 started at 2024-05-01 14:00" in caplog.text
    replace_source(warehouse, schema, f"(1, 'a2', {at(15)})")
    run(warehouse, Action.SCD2_MERGE, target, source, **options)
    assert versions(warehouse, target)[2:] == [
        (2, "b", 14, 15, "N", "N"),
        (2, "b", 15, None, "Y", "Y"),
    ]


def test_refuse_keeps_refusing_missing_keys_the_snapshot_predates(
    warehouse: WarehouseConnection, schema: str
) -> None:
    options = REFUSING | {"missing_keys": MissingKeys.NEW_RECORD}
    source, target = history(warehouse, schema, f"(1, 'a', {at(8)}), (2, 'b', {at(14)})")
    run(warehouse, Action.SCD2_MERGE, target, source, **options)
    replace_source(warehouse, schema, f"(1, 'a', {at(8)})")

    with pytest.raises(SqlGuardError, match=r"id=2 started at 2024-05-01 14:00" + WAY_PAST):
        run(warehouse, Action.SCD2_MERGE, target, source, **options)

    assert rows(warehouse, target, "id, ACTIVE_FLAG, DELETE_FLAG") == [(1, "Y", "N"), (2, "Y", "N")]


@pytest.mark.parametrize("mode", [MissingKeys.CLOSE, MissingKeys.NEW_RECORD])
@pytest.mark.parametrize("valid_from", [ValidFrom.RUN_TIME, ValidFrom.COLUMN])
def test_an_empty_snapshot_closes_nothing_unless_allowed(
    warehouse: WarehouseConnection, schema: str, mode: MissingKeys, valid_from: ValidFrom
) -> None:
    options = BY_TIME | {"missing_keys": mode, "valid_from": valid_from}
    source, target = history(warehouse, schema, f"(1, 'a', {at(8)}), (2, 'b', {at(8)})")
    run(warehouse, Action.SCD2_MERGE, target, source, **options)
    before = rows(warehouse, target, "id, name, ACTIVE_FLAG, VALID_FROM, VALID_TO")
    replace_source(warehouse, schema, "")

    with pytest.raises(
        SqlGuardError,
        match=rf"SCD2_MISSING_KEYS = {mode} would close all 2 current key\(s\) of {target}"
        r".*ALLOW_EMPTY_SNAPSHOT = Y",
    ):
        run(warehouse, Action.SCD2_MERGE, target, source, **options)

    assert rows(warehouse, target, "id, name, ACTIVE_FLAG, VALID_FROM, VALID_TO") == before
    if valid_from is ValidFrom.COLUMN:
        return  # an empty snapshot gives no time to close at: refused for that reason alone
    counts = run(warehouse, Action.SCD2_MERGE, target, source, **options, allow_empty_snapshot=True)
    assert counts.deleted == 2
    closed = [(1, "N", "N"), (2, "N", "N")]
    if mode is MissingKeys.NEW_RECORD:
        closed = [(1, "N", "N"), (1, "Y", "Y"), (2, "N", "N"), (2, "Y", "Y")]
    assert rows(warehouse, target, "id, ACTIVE_FLAG, DELETE_FLAG") == closed


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
    needs_drop_column(warehouse)
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
    requires_ledger_table(warehouse)
    needs_drop_column(warehouse)
    source, target = history(warehouse, schema, "(1, 'a', NULL), (2, 'b', NULL)")
    ledger = ledger_table().sql
    for name in ("new_key_count", "changed_key_count", "unchanged_key_count"):
        warehouse.execute("drop a ledger column", f"ALTER TABLE {ledger} DROP COLUMN {name}")

    # run() also checks that the ledger recorded exactly the counts returned.
    counts = run(warehouse, Action.SCD2_MERGE, target, source, key=("id",))

    assert (counts.new_keys, counts.changed_keys, counts.unchanged_keys) == (2, 0, 0)
    assert warehouse.fetch_value("count", count_rows(target).sql) == 2


def test_a_select_with_a_percent_sign_is_staged_with_the_run_date(
    warehouse: WarehouseConnection, schema: str
) -> None:
    """The run's instant is staged in the statement that reads the SELECT, whose own % must stay
    text: PostgreSQL's driver reads a % as a placeholder in a statement with parameters."""
    source, target = history(warehouse, schema, "(1, 'a%', NULL), (2, 'b', NULL)")
    percent = f"{source} WHERE name LIKE 'a%'"
    options: dict[str, Any] = {"key": ("id",), "valid_from": ValidFrom.RUN_DATE}

    run(warehouse, Action.SCD2_MERGE, target, percent, run_date=date(2024, 5, 2), **options)

    found = rows(warehouse, target, "id, name, VALID_FROM, ACTIVE_FLAG")
    assert [(i, name, str(start.date()), active) for i, name, start, active in found] == [
        (1, "a%", "2024-05-02", "Y")
    ]
