"""The warehouse-side attempt ledger: one row per attempt, committed with the attempt's data.

Whether an attempt's writes committed is then a fact in the warehouse itself, readable after its
process died before telling the Engine DB. Beside it, the fence table holds one row per task run:
the newest attempt that published into it (see warehouse.fence).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.counts import Counts
from etl_craft.core.errors import ConfigurationError, WarehouseError
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Column, Dialect
from etl_craft.warehouse.hash_record import RECORD_COLUMNS, record_table
from etl_craft.warehouse.statements import (
    Value,
    add_column,
    bound,
    create_schema,
    create_table,
)
from etl_craft.warehouse.targets import DEFAULT_LEDGER_SCHEMA, TargetObject, is_identifier

LEDGER_TABLE = "attempt_ledger"
FENCE_TABLE = "task_run_fence"
_COUNT_COLUMNS = (
    ("source_count", "source"),
    ("target_count", "target"),
    ("insert_count", "inserted"),
    ("update_count", "updated"),
    ("delete_count", "deleted"),
    ("duplicate_count", "duplicates"),
    ("rows_written", "rows_written"),
    ("new_key_count", "new_keys"),
    ("changed_key_count", "changed_keys"),
    ("unchanged_key_count", "unchanged_keys"),
    ("stale_key_count", "stale_keys"),
    ("same_time_key_count", "same_time_keys"),
    ("reopened_key_count", "reopened_keys"),
)
LEDGER_COLUMNS = (
    Column("attempt_id", "BIGINT PRIMARY KEY"),
    Column("task_run_id", "BIGINT NOT NULL"),
    Column("action", "VARCHAR(32) NOT NULL"),
    Column("target_object", "VARCHAR(400)"),
    *(Column(name, "BIGINT") for name, _ in _COUNT_COLUMNS),
    Column("committed_at", "TIMESTAMP WITH TIME ZONE NOT NULL"),
)
FENCE_COLUMNS = (
    Column("task_run_id", "BIGINT PRIMARY KEY"),
    Column("attempt_id", "BIGINT NOT NULL"),
    Column("fenced_at", "TIMESTAMP WITH TIME ZONE NOT NULL"),
)


@dataclass(frozen=True)
class LedgerEntry:
    attempt_id: int
    task_run_id: int
    action: str
    target: str | None
    counts: Counts
    committed_at: datetime


def ledger_table(schema: str = DEFAULT_LEDGER_SCHEMA) -> TargetObject:
    return TargetObject(_checked(schema), LEDGER_TABLE)


def fence_table(schema: str = DEFAULT_LEDGER_SCHEMA) -> TargetObject:
    return TargetObject(_checked(schema), FENCE_TABLE)


def _checked(schema: str) -> str:
    if not is_identifier(schema):
        raise ConfigurationError(
            f"Warehouse.ledger_schema {schema!r} is not a plain identifier; "
            "expected letters, digits and underscores such as etl_craft"
        )
    return schema


def ensure_ledger(conn: WarehouseConnection, schema: str = DEFAULT_LEDGER_SCHEMA) -> None:
    """Create the ledger's tables, each in its own transaction, so concurrent first writers
    don't race. Each is created where it is missing: a warehouse whose ledger predates the fence
    table gets it on its next write, and a ledger that predates a count column gets that."""
    tables = [(ledger_table(schema), LEDGER_COLUMNS), (fence_table(schema), FENCE_COLUMNS)]
    if conn.dialect.capabilities.hash_record:
        tables.append((record_table(_checked(schema)), RECORD_COLUMNS))
    # Every action but a warehouse's first finds them complete: one statement naming every
    # column of each, with no lock and no transaction of its own, says so, where reading each
    # table's columns from the catalog costs a read per table that grows with the catalog.
    # Columns are only ever added, so what is present now stays present, and the locked path
    # below settles anything missing.
    if _complete(conn, tuple(tables)):
        return
    for table, columns in tables:
        with conn.mutation(table):
            present = {column.key for column in conn.columns(table)}
            if present:
                _add_missing(conn, table, columns, present)
                continue
            conn.lock_schema(schema)
            conn.execute(f"create the ledger schema {schema}", create_schema(schema).sql)
            try:
                conn.execute(f"create the ledger {table}", create_table(table.sql, columns).sql)
            except WarehouseError:
                # Where DDL runs outside the transaction (Snowflake), no lock holds off another
                # first writer: the table it created is the one wanted.
                if not conn.exists(table):
                    raise


def _complete(
    conn: WarehouseConnection, tables: tuple[tuple[TargetObject, tuple[Column, ...]], ...]
) -> bool:
    """Whether every table is there with every column: the probe fails to bind otherwise."""
    probes = ", ".join(
        f"(SELECT {', '.join(column.name for column in columns)} FROM {table.sql} WHERE 1 = 0) "
        f"p{index}"
        for index, (table, columns) in enumerate(tables)
    )
    try:
        conn.fetch_all("check the ledger's tables", f"SELECT 1 FROM {probes}")
    except WarehouseError:
        # Missing, or unreadable for a reason the catalog reads below will meet and report.
        return all(
            column.key in {present.key for present in conn.columns(table)}
            for table, columns in tables
            for column in columns
        )
    return True


def _add_missing(
    conn: WarehouseConnection, table: TargetObject, columns: tuple[Column, ...], present: set[str]
) -> None:
    for column in columns:
        if column.key not in present:
            statement = add_column(table.sql, column)
            conn.execute(f"add {column.name} to the ledger {table}", statement.sql)


def record(
    conn: WarehouseConnection, entry: LedgerEntry, schema: str = DEFAULT_LEDGER_SCHEMA
) -> None:
    """Insert the attempt's row; the caller's transaction commits it together with the data."""
    values = row_values(conn.dialect, entry)
    sql = f"{insert_into(schema)}\nVALUES ({', '.join(value.sql for value in values)})"
    conn.execute(f"record attempt {entry.attempt_id} in the ledger", sql, [v.param for v in values])


def insert_into(schema: str = DEFAULT_LEDGER_SCHEMA) -> str:
    """INSERT INTO the ledger, its columns listed in the order of ``row_values``."""
    names = ", ".join(column.name for column in LEDGER_COLUMNS)
    return f"INSERT INTO {ledger_table(schema).sql} ({names})"


def row_values(dialect: Dialect, entry: LedgerEntry) -> list[Value]:
    """The entry's values, one bound parameter each, in the order of LEDGER_COLUMNS."""
    return [
        bound(dialect, entry.attempt_id, "BIGINT"),
        bound(dialect, entry.task_run_id, "BIGINT"),
        bound(dialect, entry.action, "VARCHAR"),
        bound(dialect, entry.target, "VARCHAR"),
        *(bound(dialect, getattr(entry.counts, field), "BIGINT") for _, field in _COUNT_COLUMNS),
        bound(dialect, entry.committed_at, "TIMESTAMP WITH TIME ZONE"),
    ]


def applied(
    conn: WarehouseConnection, attempt_id: int, schema: str = DEFAULT_LEDGER_SCHEMA
) -> Counts | None:
    """The counts the attempt committed, or None when none of its writes committed."""
    table = ledger_table(schema)
    if not conn.exists(table):
        return None
    names = ", ".join(name for name, _ in _COUNT_COLUMNS)
    rows = conn.fetch_all(
        f"read attempt {attempt_id} from the ledger",
        f"SELECT {names} FROM {table.sql} WHERE attempt_id = {conn.dialect.placeholder}",
        [attempt_id],
    )
    if not rows:
        return None
    fields = [field for _, field in _COUNT_COLUMNS]
    return Counts(**dict(zip(fields, rows[0], strict=True)))
