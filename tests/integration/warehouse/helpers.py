"""Running SQL actions in tests and reading targets back as plain rows."""

from __future__ import annotations

import itertools
import random
from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from etl_craft.core.counts import Counts
from etl_craft.handlers.sql import Action, SqlActionSpec, run_sql_action
from etl_craft.handlers.sql.spec import (
    DedupeOrder,
    DeleteMode,
    MissingKeys,
    RefreshType,
    StaleRows,
    ValidFrom,
)
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Publication
from etl_craft.warehouse.substitution import TokenValues, substitute
from etl_craft.warehouse.targets import DEFAULT_LEDGER_SCHEMA, TargetObject

# Attempt ids are unique across tests, because the ledger of a module's database is shared.
_ATTEMPTS = itertools.count(random.randrange(1, 2**40))
PIPELINE_ID, PIPELINE_RUN_ID, TASK_RUN_ID, ACTOR = 11, 22, 33, "tester@laptop"
RUN_DATE = date(2024, 3, 1)


def next_attempt() -> int:
    return next(_ATTEMPTS)


def spec(
    action: Action,
    target: str,
    sql: str | None,
    *,
    refresh: RefreshType = RefreshType.FULL,
    key: tuple[str, ...] = (),
    compare: tuple[str, ...] = (),
    order: str = "",
    delete_mode: DeleteMode = DeleteMode.HARD,
    evolve: bool = False,
    history: bool = False,
    task_run_id: int = TASK_RUN_ID,
    attempt_id: int | None = None,
    pipeline_run_id: int = PIPELINE_RUN_ID,
    valid_from: ValidFrom = ValidFrom.RUN_TIME,
    valid_from_column: str | None = None,
    missing_keys: MissingKeys = MissingKeys.KEEP,
    stale_rows: StaleRows = StaleRows.IGNORE,
    allow_empty_snapshot: bool = False,
    run_date: date = RUN_DATE,
) -> SqlActionSpec:
    tokens = TokenValues(
        PIPELINE_ID, pipeline_run_id, task_run_id, run_date, refresh is RefreshType.FULL
    )
    return SqlActionSpec(
        action=action,
        target=TargetObject.parse(target),
        source_sql=substitute(sql, tokens) if sql is not None else None,
        pipeline_id=PIPELINE_ID,
        pipeline_run_id=pipeline_run_id,
        task_run_id=task_run_id,
        attempt_id=attempt_id if attempt_id is not None else next_attempt(),
        actor=ACTOR,
        run_date=run_date,
        refresh_type=refresh,
        merge_key=key,
        compare_columns=compare,
        dedupe_order=DedupeOrder(order),
        delete_mode=delete_mode,
        schema_evolution=evolve,
        history_columns=history,
        valid_from=valid_from,
        valid_from_column=valid_from_column,
        missing_keys=missing_keys,
        stale_rows=stale_rows,
        allow_empty_snapshot=allow_empty_snapshot,
    )


def run(
    conn: WarehouseConnection, action: Action, target: str, sql: str | None, **options: Any
) -> Counts:
    """Run an action and check the ledger recorded exactly the counts it returned."""
    request = spec(action, target, sql, **options)
    counts = run_sql_action(conn, request)
    assert applied(conn, request.attempt_id) == counts
    return counts


def applied(
    conn: WarehouseConnection, attempt_id: int, ledger_schema: str = DEFAULT_LEDGER_SCHEMA
) -> Counts | None:
    """What the warehouse's publication says the attempt committed."""
    return conn.publisher.applied(conn, attempt_id, ledger_schema)


def requires_ledger_table(conn: WarehouseConnection) -> None:
    """Skip where the attempt ledger is not a table of its own beside the data."""
    publication = conn.dialect.capabilities.publication
    if publication is Publication.SNAPSHOT:
        pytest.skip(
            f"{conn.dialect.name} publishes by {publication}: its ledger is the snapshot summary, "
            "not a ledger table (tests/integration/warehouse/test_iceberg.py covers it)"
        )


def rows(
    conn: WarehouseConnection, target: str, columns: str, where: str = ""
) -> list[tuple[Any, ...]]:
    """The target's rows as plain values, sorted, so both warehouses compare equal."""
    clause = f" WHERE {where}" if where else ""
    found = conn.fetch_all("read back", f"SELECT {columns} FROM {target}{clause}")
    return sorted((tuple(_plain(value) for value in row) for row in found), key=repr)


def _plain(value: object) -> object:
    if isinstance(value, Decimal):
        return str(value)
    return value


def definition(conn: WarehouseConnection, target: str) -> list[tuple[str, str]]:
    return [(c.key, c.type) for c in conn.columns(TargetObject.parse(target))]


def table(conn: WarehouseConnection, name: str, columns: str, values: str = "") -> None:
    """Create a plain table (not through etl-craft) and fill it."""
    conn.execute("create a test table", f"CREATE TABLE {name} ({columns})")
    if values:
        conn.execute("fill a test table", f"INSERT INTO {name} VALUES {values}")


def needs(warehouse: WarehouseConnection, capable: bool, what: str) -> None:
    """Skip, naming what this test relies on that the warehouse's capabilities lack."""
    if not capable:
        pytest.skip(f"the {warehouse.dialect.name} warehouse has no {what}")


def needs_transactions(warehouse: WarehouseConnection) -> None:
    needs(
        warehouse,
        warehouse.dialect.capabilities.transactions,
        "transactions (it publishes by a catalog operation; its own tests cover the fence)",
    )


def needs_drop_column(warehouse: WarehouseConnection) -> None:
    """Skip where a test can't make a table look older by dropping its newer columns."""
    if warehouse.dialect.name == "spark":
        pytest.skip(
            "Spark's parquet tables refuse ALTER TABLE ... DROP COLUMN, which this test uses to "
            "make a table look as an older etl-craft left it"
        )
