"""Concurrent appends never share a ROW_ID; a retried append leaves each row once."""

from __future__ import annotations

import multiprocessing
import threading
from multiprocessing.synchronize import Barrier

import pytest

from etl_craft.core.counts import Counts
from etl_craft.core.errors import WarehouseError
from etl_craft.core.time import utc_now
from etl_craft.handlers.sql import Action, run_sql_action
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.ledger import LedgerEntry, ensure_ledger, record
from tests.integration.warehouse.conftest import open_warehouse
from tests.integration.warehouse.helpers import (
    applied,
    needs_transactions,
    next_attempt,
    requires_ledger_table,
    rows,
    run,
    spec,
)

ROUNDS, ROWS = 5, 200
SOURCE = "SELECT * FROM (VALUES {}) v(n)".format(", ".join(f"({n})" for n in range(ROWS)))
TIMEOUT = 120


def append_rounds(
    kind: str, location: str, target: str, writer: int, barrier: Barrier | threading.Barrier
) -> None:
    conn = open_warehouse(kind, location)
    try:
        barrier.wait(TIMEOUT)
        for round_ in range(ROUNDS):
            run_sql_action(
                conn, spec(Action.APPEND_TABLE, target, SOURCE, task_run_id=writer * 1000 + round_)
            )
    finally:
        conn.close()


def prepared_target(warehouse: WarehouseConnection, schema: str) -> str:
    target = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, SOURCE)
    return target


def assert_unique_row_ids(warehouse: WarehouseConnection, target: str) -> None:
    total = 2 * ROUNDS * ROWS
    assert rows(
        warehouse, target, "COUNT(*), COUNT(DISTINCT ROW_ID), MIN(ROW_ID), MAX(ROW_ID)"
    ) == [(total, total, 1, total)]


@pytest.mark.postgres
@pytest.mark.parametrize("warehouse_kind", ["postgresql"], indirect=True)
def test_two_processes_append_with_unique_row_ids(
    warehouse: WarehouseConnection, schema: str, warehouse_kind: str, warehouse_location: str
) -> None:
    target = prepared_target(warehouse, schema)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    processes = [
        context.Process(
            target=append_rounds, args=(warehouse_kind, warehouse_location, target, writer, barrier)
        )
        for writer in (1, 2)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(TIMEOUT)
    assert [process.exitcode for process in processes] == [0, 0]
    assert_unique_row_ids(warehouse, target)


@pytest.mark.parametrize("warehouse_kind", ["duckdb"], indirect=True)
def test_two_duckdb_writers_append_with_unique_row_ids(
    warehouse: WarehouseConnection, schema: str, warehouse_kind: str, warehouse_location: str
) -> None:
    """DuckDB lets one process open a file, so its concurrent writers are threads of one process."""
    target = prepared_target(warehouse, schema)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def write(writer: int) -> None:
        try:
            append_rounds(warehouse_kind, warehouse_location, target, writer, barrier)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=write, args=(writer,)) for writer in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert errors == []
    assert_unique_row_ids(warehouse, target)


def test_failed_then_retried_append_leaves_rows_once(
    warehouse: WarehouseConnection, schema: str
) -> None:
    requires_ledger_table(warehouse)
    needs_transactions(warehouse)
    target = prepared_target(warehouse, schema)
    task_run = 4242
    # Attempt 1 fails after its insert (its ledger row can't be written): nothing stays.
    failing = next_attempt()
    ensure_ledger(warehouse)
    with warehouse.transaction():
        record(warehouse, LedgerEntry(failing, 1, "OTHER", None, Counts(), utc_now()))
    with pytest.raises(WarehouseError):
        run_sql_action(
            warehouse,
            spec(Action.APPEND_TABLE, target, SOURCE, task_run_id=task_run, attempt_id=failing),
        )
    # Attempt 2 commits, but its process dies before telling the Engine DB: attempt 3 reruns.
    second = run(warehouse, Action.APPEND_TABLE, target, SOURCE, task_run_id=task_run)
    third = run(warehouse, Action.APPEND_TABLE, target, SOURCE, task_run_id=task_run)
    each_once = sorted([(n, 1) for n in range(ROWS)], key=repr)
    assert rows(warehouse, target, "n, COUNT(*)", "1 = 1 GROUP BY n") == each_once
    assert (second.deleted, third.deleted) == (0, ROWS)
    assert applied(warehouse, failing) == Counts()
