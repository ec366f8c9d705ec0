"""The task run's fence: an older attempt never publishes over a later one, and overlapping
attempts serialize on the fence row, on real PostgreSQL and DuckDB warehouses."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import date

import pytest

from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.core.errors import StaleTransitionError
from etl_craft.handlers.scripts.contract import ScriptContext
from etl_craft.handlers.sql import Action, run_sql_action
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.fence import fenced_transaction
from etl_craft.warehouse.ledger import ensure_ledger, fence_table
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from tests.fixtures.waiting import wait_for
from tests.integration.warehouse.helpers import (
    applied,
    needs_transactions,
    next_attempt,
    requires_ledger_table,
    rows,
    run,
    spec,
)

SOURCE = "SELECT * FROM (VALUES (1), (2), (3)) v(n)"
BATCH = 10


def test_an_older_attempt_is_refused_once_a_later_one_published(
    warehouse: WarehouseConnection, schema: str
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, SOURCE)
    task_run, older, newer = 5151, next_attempt(), next_attempt()
    append = spec(Action.APPEND_TABLE, target, SOURCE, task_run_id=task_run, attempt_id=newer)
    run_sql_action(warehouse, append)

    late = spec(
        Action.OVERWRITE_TABLE, target, "SELECT 9 AS n", task_run_id=task_run, attempt_id=older
    )
    with pytest.raises(StaleTransitionError) as refused:
        run_sql_action(warehouse, late)

    message = str(refused.value)
    assert f"attempt {older} of task run {task_run}" in message
    assert f"later attempt {newer}" in message
    assert "its result stands" in message
    assert rows(warehouse, target, "n, TASK_RUN_ID") == [
        (1, task_run),
        (2, task_run),
        (3, task_run),
    ]
    assert applied(warehouse, older) is None
    assert applied(warehouse, newer) is not None


def test_a_ledger_without_its_fence_table_gets_one(
    warehouse: WarehouseConnection, schema: str
) -> None:
    requires_ledger_table(warehouse)
    needs_transactions(warehouse)
    ensure_ledger(warehouse)
    fence = fence_table()
    with warehouse.transaction():
        warehouse.execute("drop the fence table", f"DROP TABLE {fence.sql}")
    target = f"{schema}.t"
    run(warehouse, Action.SETUP_TABLE, target, SOURCE)
    run(warehouse, Action.APPEND_TABLE, target, SOURCE)
    assert warehouse.exists(fence)
    assert rows(warehouse, target, "n") == [(1,), (2,), (3,)]


def land(conn: WarehouseConnection, target: str, task_run: int, attempt: int) -> None:
    """The documented retry pattern: forget the task run's rows, insert the batch."""
    mark = conn.dialect.placeholder
    conn.execute("forget", f"DELETE FROM {target} WHERE task_run_id = {mark}", [task_run])
    for n in range(BATCH):
        conn.execute(
            "land",
            f"INSERT INTO {target} (n, task_run_id, attempt_id) VALUES ({mark}, {mark}, {mark})",
            [n, task_run, attempt],
        )


def waiting_on_lock(location: str) -> bool:
    # From a connection of its own: a transaction sees one snapshot of pg_stat_activity.
    with PostgreSQLConnection(location) as observer:
        found = observer.fetch_value(
            "count backends waiting on a lock",
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'",
        )
    return int(found) == 1


def in_background(work: Callable[[], None]) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def guarded() -> None:
        try:
            work()
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=guarded)
    thread.start()
    return thread, errors


def landing_table(warehouse: WarehouseConnection, schema: str) -> str:
    target = f"{schema}.landed"
    warehouse.execute(
        "create the landing table",
        f"CREATE TABLE {target} (n BIGINT, task_run_id BIGINT, attempt_id BIGINT)",
    )
    return target


@pytest.mark.postgres
@pytest.mark.parametrize("warehouse_kind", ["postgresql"], indirect=True)
def test_a_retry_waits_for_the_paused_attempt_and_then_replaces_its_batch(
    warehouse: WarehouseConnection, schema: str, warehouse_location: str
) -> None:
    """Under READ COMMITTED the retry's DELETE would neither see nor wait for the paused
    attempt's uncommitted rows; the fence row makes it wait, so the batch lands once."""
    target = landing_table(warehouse, schema)
    task_run, paused, retry = 6161, next_attempt(), next_attempt()
    script = script_context(warehouse_location, task_run, retry)
    ensure_ledger(warehouse)
    with fenced_transaction(warehouse, task_run, paused):
        land(warehouse, target, task_run, paused)

        def retry_lands() -> None:
            with script.fenced_transaction() as conn:
                land(conn, target, task_run, retry)

        thread, errors = in_background(retry_lands)
        wait_for(lambda: waiting_on_lock(warehouse_location), "the retry to wait on the fence row")
    thread.join(60)
    assert errors == []
    counted = rows(warehouse, target, "attempt_id, COUNT(*), COUNT(DISTINCT n)", "1 = 1 GROUP BY 1")
    assert counted == [(retry, BATCH, BATCH)]


@pytest.mark.postgres
@pytest.mark.parametrize("warehouse_kind", ["postgresql"], indirect=True)
def test_a_paused_attempt_that_resumes_during_its_retry_waits_and_is_refused(
    warehouse: WarehouseConnection, schema: str, warehouse_location: str
) -> None:
    target = landing_table(warehouse, schema)
    task_run, paused, retry = 7171, next_attempt(), next_attempt()
    script = script_context(warehouse_location, task_run, paused)
    ensure_ledger(warehouse)
    with fenced_transaction(warehouse, task_run, retry):
        land(warehouse, target, task_run, retry)

        def paused_lands() -> None:
            with script.fenced_transaction() as conn:
                land(conn, target, task_run, paused)

        thread, errors = in_background(paused_lands)
        wait_for(lambda: waiting_on_lock(warehouse_location), "the paused one to wait on the fence")
    thread.join(60)
    assert [type(error) for error in errors] == [StaleTransitionError]
    assert f"later attempt {retry}" in str(errors[0])
    counted = rows(warehouse, target, "attempt_id, COUNT(*), COUNT(DISTINCT n)", "1 = 1 GROUP BY 1")
    assert counted == [(retry, BATCH, BATCH)]


@pytest.mark.parametrize("warehouse_kind", ["duckdb"], indirect=True)
def test_a_script_s_fenced_transaction_refuses_an_older_attempt_on_duckdb(
    warehouse: WarehouseConnection, schema: str, warehouse_location: str
) -> None:
    target = landing_table(warehouse, schema)
    task_run, older, newer = 8181, next_attempt(), next_attempt()
    warehouse.close()  # one process holds a DuckDB file at a time: the script opens its own
    with script_context(warehouse_location, task_run, newer, duckdb=True).fenced_transaction() as c:
        land(c, target, task_run, newer)
    late = script_context(warehouse_location, task_run, older, duckdb=True)
    with pytest.raises(StaleTransitionError), late.fenced_transaction() as conn:
        land(conn, target, task_run, older)
    with late.warehouse() as conn:
        counted = rows(conn, target, "attempt_id, COUNT(*)", "1 = 1 GROUP BY 1")
    assert counted == [(newer, BATCH)]


def script_context(
    location: str, task_run: int, attempt: int, *, duckdb: bool = False
) -> ScriptContext:
    settings = Warehouse(
        type=WarehouseType.DUCKDB if duckdb else WarehouseType.POSTGRESQL,
        url=None if duckdb else location,
        path=location if duckdb else None,
        ledger_schema="etl_craft",
        max_queries=None,
    )
    return ScriptContext(
        offset=None,
        offset_type=None,
        input_params={},
        run_date=date(2024, 3, 1),
        pipeline_id=1,
        pipeline_run_id=1,
        task_id=1,
        task_run_id=task_run,
        attempt_id=attempt,
        log=logging.getLogger("test"),
        warehouse_settings=settings,
    )
