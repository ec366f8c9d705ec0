"""Two SETUP_TABLE attempts creating tables in one new PostgreSQL schema at the same time."""

from __future__ import annotations

import threading

import pytest

from etl_craft.handlers.sql import Action
from etl_craft.warehouse import TargetObject
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from tests.fixtures.databases import unique_name
from tests.fixtures.waiting import wait_for
from tests.integration.warehouse.helpers import run

pytestmark = pytest.mark.postgres
TIMEOUT = 30.0
SELECT = "SELECT CAST(1 AS INTEGER) AS id"


def waiting_on_a_lock(conn: PostgreSQLConnection, pid: int) -> bool:
    found = conn.fetch_value(
        "is the other writer waiting",
        "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
        [pid],
    )
    return bool(found == "Lock")


def test_the_second_creator_of_a_schema_waits_for_the_first_and_succeeds(
    pg_warehouse_url: str,
) -> None:
    schema = unique_name("new")
    first, second = PostgreSQLConnection(pg_warehouse_url), PostgreSQLConnection(pg_warehouse_url)
    second_pid = second.raw().info.backend_pid
    errors: list[BaseException] = []

    def create_second_table() -> None:
        try:
            run(second, Action.SETUP_TABLE, f"{schema}.second", SELECT)
        except BaseException as error:
            errors.append(error)

    try:
        with first.transaction():
            first.lock_schema(schema)
            first.execute("create the schema first", f"CREATE SCHEMA IF NOT EXISTS {schema}")
            writer = threading.Thread(target=create_second_table)
            writer.start()

            def second_waits() -> bool:
                assert writer.is_alive(), errors
                return waiting_on_a_lock(first, second_pid)

            wait_for(second_waits, "the second writer to wait on the schema lock", TIMEOUT)
        writer.join(TIMEOUT)
        assert not writer.is_alive()
        assert errors == []
        assert second.exists(TargetObject(schema, "second"))
    finally:
        first.close()
        second.close()
