"""A rehearsed action counts what the action then does, and leaves the warehouse as it was."""

from __future__ import annotations

from typing import Any

import pytest

from etl_craft.core.errors import SqlGuardError, WarehouseError
from etl_craft.handlers.sql import Action
from etl_craft.handlers.sql.rehearsal import rehearse_action, sample_select
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.spark import SparkConnection
from tests.integration.warehouse.helpers import definition, rows, run, spec, table

DATA = "id, code"
SELECT = "SELECT id, code FROM {}.src"


@pytest.fixture
def select(warehouse: WarehouseConnection, schema: str) -> str:
    table(warehouse, f"{schema}.src", "id INTEGER, code VARCHAR(10)", "(1, 'a'), (2, 'b')")
    return SELECT.format(schema)


def state(conn: WarehouseConnection, target: str) -> tuple[Any, ...]:
    """The target's definition and every row, or nothing when it doesn't exist."""
    found = definition(conn, target)
    return (found, rows(conn, target, "*")) if found else ()


@pytest.mark.parametrize(
    "action",
    [Action.CREATE_TABLE, Action.OVERWRITE_TABLE, Action.APPEND_TABLE, Action.DROP_TABLE],
)
def test_the_rehearsal_counts_what_the_action_then_does_and_changes_nothing(
    warehouse: WarehouseConnection, schema: str, select: str, action: Action
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.CREATE_TABLE, target, "SELECT 9 AS id, 'z' AS code")
    before = state(warehouse, target)
    sql = None if action is Action.DROP_TABLE else select

    rehearsed = rehearse_action(warehouse, spec(action, target, sql))

    assert state(warehouse, target) == before
    assert rehearsed.refusal is None
    assert rehearsed.target_before == 1
    assert rehearsed.counts == run(warehouse, action, target, sql)


def test_a_table_setup_would_create_is_counted_and_not_created(
    warehouse: WarehouseConnection, schema: str, select: str
) -> None:
    target = f"{schema}.fresh"

    rehearsed = rehearse_action(warehouse, spec(Action.SETUP_TABLE, target, select))

    assert rehearsed.target_before is None
    assert state(warehouse, target) == ()
    assert rehearsed.counts == run(warehouse, Action.SETUP_TABLE, target, select)
    assert state(warehouse, target) != ()


def test_columns_schema_evolution_would_add_are_not_added(
    warehouse: WarehouseConnection, schema: str, select: str
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.CREATE_TABLE, target, f"SELECT id FROM {schema}.src")
    before = state(warehouse, target)
    request = spec(Action.APPEND_TABLE, target, select, evolve=True)

    rehearsed = rehearse_action(warehouse, request)

    assert state(warehouse, target) == before
    assert rehearsed.counts is not None
    assert rehearsed.counts.inserted == 2


def test_a_refused_action_is_returned_not_raised_and_changes_nothing(
    warehouse: WarehouseConnection, schema: str, select: str
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.CREATE_TABLE, target, f"SELECT id FROM {schema}.src")
    before = state(warehouse, target)

    rehearsed = rehearse_action(warehouse, spec(Action.APPEND_TABLE, target, select))

    assert state(warehouse, target) == before
    assert rehearsed.counts is None
    assert isinstance(rehearsed.refusal, SqlGuardError)
    assert "SCHEMA_EVOLUTION" in str(rehearsed.refusal)


def test_the_sample_keeps_no_scratch_table_behind(
    warehouse: WarehouseConnection, schema: str, select: str
) -> None:
    sample = sample_select(warehouse, spec(Action.APPEND_TABLE, f"{schema}.t", select), 1)

    assert (sample.total, len(sample.rows)) == (2, 1)
    assert [column.key for column in sample.columns] == ["id", "code"]
    assert previews(warehouse) == []


def previews(warehouse: WarehouseConnection) -> list[tuple[Any, ...]]:
    if isinstance(warehouse, SparkConnection):
        # Spark's catalog has no information_schema; its scratch tables share one schema.
        return warehouse.run_sql(
            "look for scratch tables",
            f"SHOW TABLES IN {warehouse.scratch_schema} LIKE 'etl_preview*'",
        )
    return warehouse.fetch_all(
        "look for scratch tables",
        "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'etl_preview%'",
    )


def test_a_statement_the_warehouse_refuses_is_returned_and_the_connection_goes_on(
    warehouse: WarehouseConnection, schema: str, select: str
) -> None:
    target = f"{schema}.t"
    run(warehouse, Action.CREATE_TABLE, target, "SELECT 9 AS id, 1 AS code")
    before = state(warehouse, target)
    request = spec(Action.APPEND_TABLE, target, "SELECT 1 AS id, 'x' AS code")

    rehearsed = rehearse_action(warehouse, request)

    assert isinstance(rehearsed.refusal, WarehouseError)
    assert rehearsed.counts is None
    assert state(warehouse, target) == before
