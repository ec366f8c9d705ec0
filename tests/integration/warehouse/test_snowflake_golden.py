"""Golden SQL: the exact statements each action sends to Snowflake, kept as reviewed files.

Each case runs its action on the emulated Snowflake and compares what the connection sent,
statement by statement (transaction control included), with tests/integration/warehouse/golden/
snowflake/<case>.sql. Names that differ per run (the test's schema, scratch tables, attempt ids,
instants) are written as placeholders. A change to the rendering shows as a diff of these files:
regenerate them with ETL_CRAFT_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import snowflake.connector

from etl_craft.handlers.sql import Action, run_sql_action
from etl_craft.handlers.sql.spec import DeleteMode, MissingKeys
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Upsert
from etl_craft.warehouse.ledger import applied
from etl_craft.warehouse.snowflake import SnowflakeDialect, connect_arguments
from etl_craft.warehouse.statements import bound, fence_upsert
from tests.fixtures.snowflake import EmulatedSnowflakeConnection, Emulator
from tests.integration.warehouse.helpers import PIPELINE_ID, run, spec, table

GOLDEN = Path(__file__).parent / "golden" / "snowflake"
SOURCE_COLUMNS = "id INTEGER, code VARCHAR(10), amount DECIMAL(12,2), pipeline_id BIGINT"
SOURCE_ROWS = f"(1, 'a', 1.50, {PIPELINE_ID}), (2, 'b', 2.00, {PIPELINE_ID})"


class Recording(EmulatedSnowflakeConnection):
    """Keeps the text of every statement sent while ``recording`` is on."""

    recording = False
    sent: list[str]

    def _send(self, sql: str, params: Sequence[object]) -> Any:
        if self.recording:
            self.sent.append(sql)
        return super()._send(sql, params)


@pytest.fixture
def recorded(snowflake_emulator: Emulator) -> Iterator[Recording]:
    options = snowflake_emulator.options(snowflake_emulator.new_database())
    conn = Recording(
        snowflake.connector,
        connect_arguments(options, {"password": "emulated"}, snowflake_emulator.url),
    )
    conn.sent = []
    conn.execute("create the schema", "CREATE SCHEMA g")
    table(conn, "g.src", SOURCE_COLUMNS, SOURCE_ROWS)
    yield conn
    conn.close()


SELECT = "SELECT id, code, amount FROM g.src WHERE $$pipeline_id_filter"


def _setup(conn: WarehouseConnection, *, history: bool = False) -> None:
    run(conn, Action.SETUP_TABLE, "g.t", SELECT, history=history)


def _filled(conn: WarehouseConnection, *, history: bool = False) -> None:
    _setup(conn, history=history)
    run(conn, Action.APPEND_TABLE, "g.t", SELECT)


def _changed(conn: WarehouseConnection) -> None:
    _setup(conn, history=True)
    run(conn, Action.SCD2_MERGE, "g.t", SELECT, key=("id",))
    conn.execute("change the source", "UPDATE g.src SET amount = 9 WHERE id = 1")


Case = tuple[Callable[[WarehouseConnection], None] | None, Action, dict[str, Any]]

CASES: dict[str, Case] = {
    "create_table": (None, Action.CREATE_TABLE, {}),
    "setup_table": (None, Action.SETUP_TABLE, {}),
    "overwrite_table": (_filled, Action.OVERWRITE_TABLE, {}),
    "append_table": (_setup, Action.APPEND_TABLE, {}),
    "scd1_merge": (_filled, Action.SCD1_MERGE, {"key": ("id",)}),
    "scd2_merge": (_changed, Action.SCD2_MERGE, {"key": ("id",)}),
    "scd2_merge_new_record": (
        _changed,
        Action.SCD2_MERGE,
        {"key": ("id",), "missing_keys": MissingKeys.NEW_RECORD, "sql": SELECT + " AND id = 2"},
    ),
    "delete_rows_hard": (_filled, Action.DELETE_ROWS, {"key": ("id",)}),
    "delete_rows_soft": (
        _filled,
        Action.DELETE_ROWS,
        {"key": ("id",), "delete_mode": DeleteMode.SOFT},
    ),
    "drop_table": (_filled, Action.DROP_TABLE, {"sql": None}),
}

_PLACEHOLDERS = (
    (re.compile(r"\b(etl_[a-z]+)_\d+_\d+_[0-9a-f]{6}\b"), r"\1"),
    (re.compile(r"'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?\+00:00'"), "'<instant>'"),
    (re.compile(r"\bWH_[0-9A-F]{12}\b"), "<database>"),
)


def normalized(statements: list[str]) -> str:
    text = "\n;\n".join(statements) + "\n"
    for pattern, replacement in _PLACEHOLDERS:
        text = pattern.sub(replacement, text)
    return text


@pytest.mark.parametrize("case", sorted(CASES))
def test_statements_sent_match_the_golden_file(recorded: Recording, case: str) -> None:
    prepare, action, given = CASES[case]
    options = dict(given)
    history = action is Action.SCD2_MERGE
    if prepare is not None:
        prepare(recorded)
    sql = options.pop("sql", SELECT)
    request = spec(action, "g.t", sql, history=history, **options)
    recorded.recording = True
    counts = run_sql_action(recorded, request)
    recorded.recording = False
    assert applied(recorded, request.attempt_id) == counts
    sent = normalized(recorded.sent)
    golden = GOLDEN / f"{case}.sql"
    if os.environ.get("ETL_CRAFT_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(sent)
    assert golden.exists(), f"{golden} is missing: run with ETL_CRAFT_UPDATE_GOLDEN=1, review it"
    assert sent == golden.read_text(), (
        f"the statements {action} sends differ from {golden}; if the change is intended, "
        "regenerate with ETL_CRAFT_UPDATE_GOLDEN=1 and review the diff"
    )


def test_the_fence_merge_a_live_account_is_sent_matches_the_golden_file() -> None:
    """Rendered, not sent: the emulator runs MERGE only outside a transaction."""
    dialect = SnowflakeDialect()
    assert dialect.capabilities.upsert is Upsert.MERGE
    values = [
        bound(dialect, 33, "BIGINT"),
        bound(dialect, 7, "BIGINT"),
        bound(dialect, None, "TIMESTAMP WITH TIME ZONE"),
    ]
    statements = fence_upsert(dialect, "etl_craft.task_run_fence", values, 33)
    sent = normalized([statement.sql for statement in statements])
    golden = GOLDEN / "fence_merge.sql"
    if os.environ.get("ETL_CRAFT_UPDATE_GOLDEN"):
        golden.write_text(sent)
    assert sent == golden.read_text()
    assert [statement.params for statement in statements] == [[33, 7, None]]
