"""Clearing tens of thousands of flags stays within each Engine DB's parameter limit."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlalchemy.pool import ConnectionPoolEntry

from etl_craft.enginedb.connection import EngineDB
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.duckdb import DuckDBConnection
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from tests.fixtures.databases import unique_name
from tests.integration.rules.helpers import RuleTask

# 1,000 keys and the rule and task run ids: the most any flag statement binds.
SQLITE_BIND_BUDGET = 1002


def big_table(warehouse: WarehouseConnection, keys: int, run_id: int) -> str:
    schema = unique_name("s")
    warehouse.execute("schema", f"CREATE SCHEMA {schema}")
    table = f"{schema}.orders"
    series = (
        "generate_series(1, %d)"
        if isinstance(warehouse, PostgreSQLConnection)
        else "range(1, %d + 1)"
    )
    warehouse.execute(
        "fill",
        f"CREATE TABLE {table} AS SELECT CAST(g AS INTEGER) AS order_id, -1 AS amount, "
        f"'Y' AS ACTIVE_FLAG, CAST({run_id} AS BIGINT) AS PIPELINE_RUN_ID "
        f"FROM {series % keys} AS s(g)",
    )
    # Statistics, as a loaded table has them: without, PostgreSQL plans a nested loop.
    warehouse.execute("analyze", f"ANALYZE {table}")
    return table


def flag_then_clear(db: EngineDB, warehouse: WarehouseConnection, keys: int) -> None:
    task = RuleTask(db)
    run = task.new_run()
    table = big_table(warehouse, keys, run)
    rule = task.add_rule("NEGATIVE", table, f"SELECT order_id FROM {table} WHERE amount < 0;")
    keeper = task.add_rule("FIRST", table, f"SELECT order_id FROM {table} WHERE order_id = 1")
    assert task.check(warehouse, run).rules[1].opened == keys
    assert task.check(warehouse, run).rules[1].still_standing == keys

    warehouse.execute("keep one order", f"DELETE FROM {table} WHERE order_id > 1")
    warehouse.execute("fix it", f"UPDATE {table} SET amount = 1")
    result = task.check(warehouse, task.new_run(), forced=True).rules[1]
    assert (result.cleared_deleted, result.cleared_passed) == (keys - 1, 1)
    assert task.standing(rule) == set()
    # The other rule's flag and the history of the cleared ones are kept.
    assert task.standing(keeper) == {'["1"]'}
    assert len(task.flags(rule)) == keys


def test_70000_keys_flag_and_clear_on_postgresql(
    pg_engine_url: str, rules_pg_warehouse_url: str
) -> None:
    db = EngineDB(pg_engine_url)
    warehouse = PostgreSQLConnection(rules_pg_warehouse_url)
    try:
        flag_then_clear(db, warehouse, 70_000)
    finally:
        warehouse.close()
        db.dispose()


@contextmanager
def bind_budget(db: EngineDB, budget: int) -> Iterator[None]:
    def limit(dbapi: sqlite3.Connection, record: ConnectionPoolEntry) -> None:
        dbapi.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, budget)

    db.dispose()
    event.listen(db.engine, "connect", limit)
    yield


def test_40000_keys_flag_and_clear_on_sqlite_within_1002_binds(
    sqlite_engine_url: str, tmp_path: Path
) -> None:
    db = EngineDB(sqlite_engine_url)
    warehouse = DuckDBConnection(str(tmp_path / "big.duckdb"))
    try:
        with bind_budget(db, SQLITE_BIND_BUDGET):
            flag_then_clear(db, warehouse, 40_000)
    finally:
        warehouse.close()
        db.dispose()


def test_the_budget_is_enforced(sqlite_engine_url: str) -> None:
    """Without this, the test above would pass whatever the chunk size."""
    db = EngineDB(sqlite_engine_url)
    try:
        with bind_budget(db, SQLITE_BIND_BUDGET), db.read() as conn:
            params = ", ".join(["?"] * (SQLITE_BIND_BUDGET + 1))
            raw = conn.connection.connection.dbapi_connection
            assert raw is not None
            with pytest.raises(sqlite3.OperationalError, match="too many SQL variables"):
                raw.execute(f"SELECT 1 WHERE 1 IN ({params})", [1] * (SQLITE_BIND_BUDGET + 1))
    finally:
        db.dispose()
