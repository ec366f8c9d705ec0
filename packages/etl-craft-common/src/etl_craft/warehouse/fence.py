"""Fencing tokens: the attempt id guards every warehouse write that publishes a task run's result.

A publishing transaction takes the task run's row of the fence table for its attempt and holds it
to commit. Attempt ids only grow, so a lower id than the one recorded there means a later
attempt of the same task run has already published (or is publishing): the older attempt is
refused, and its transaction, writes included, rolls back. Two attempts that overlap serialize
on that row, because the second waits for the first one's commit before it reads the id the
first recorded.

An action takes the fence last, with its ledger row, in the transaction of its writes (one
statement where the warehouse allows it): the target's mutation lock, held from before the first
read, already keeps two attempts of the task run from writing it at once. A script's own writes
have no target lock, so they take the fence first.

PostgreSQL holds the row lock to commit. DuckDB lets one process at a time open the database
file (warehouse.duckdb), so there the publishing transactions are serialized already and the
fence row is read and written with no one else in between.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from etl_craft.core.counts import Counts
from etl_craft.core.errors import StaleTransitionError
from etl_craft.core.time import utc_now
from etl_craft.warehouse import ledger, statements
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Upsert
from etl_craft.warehouse.ledger import LedgerEntry, ensure_ledger, fence_table
from etl_craft.warehouse.publication import Fence, Publisher
from etl_craft.warehouse.statements import bound
from etl_craft.warehouse.targets import DEFAULT_LEDGER_SCHEMA, TargetObject


def take_fence(
    conn: WarehouseConnection,
    task_run_id: int,
    attempt_id: int,
    schema: str = DEFAULT_LEDGER_SCHEMA,
) -> None:
    """Inside the publishing transaction: claim the task run's fence row for ``attempt_id``.

    Raises StaleTransitionError when a later attempt of the task run holds it.
    """
    table = fence_table(schema)
    dialect = conn.dialect
    values = [
        bound(dialect, task_run_id, "BIGINT"),
        bound(dialect, attempt_id, "BIGINT"),
        bound(dialect, utc_now(), "TIMESTAMP WITH TIME ZONE"),
    ]
    purpose = f"take the fence of task run {task_run_id} for attempt {attempt_id}"
    upserts = statements.fence_upsert(dialect, table.sql, values, task_run_id)
    upsert = dialect.capabilities.upsert
    if upsert is Upsert.ON_CONFLICT:
        [statement] = upserts
        if conn.fetch_all(purpose, statement.sql, statement.params):
            return
    elif upsert is Upsert.INSERT_THEN_UPDATE:
        for statement in upserts:
            if conn.execute(purpose, statement.sql, statement.params) == 1:
                return
    else:
        for statement in upserts:
            conn.execute(purpose, statement.sql, statement.params)
    refuse(conn, task_run_id, attempt_id, schema)


def refuse(
    conn: WarehouseConnection,
    task_run_id: int,
    attempt_id: int,
    schema: str = DEFAULT_LEDGER_SCHEMA,
) -> None:
    """Unless ``attempt_id`` holds the fence: raise StaleTransitionError naming the holder."""
    table = fence_table(schema)
    holder = conn.fetch_value(
        f"read the fence of task run {task_run_id}",
        f"SELECT attempt_id FROM {table.sql} WHERE task_run_id = {conn.dialect.placeholder}",
        [task_run_id],
    )
    if holder == attempt_id:
        return
    raise StaleTransitionError(
        f"attempt {attempt_id} of task run {task_run_id} is refused its warehouse commit: the "
        f"later attempt {holder} of the same task run has already published, and its result "
        f"stands; attempt {attempt_id} wrote nothing (its transaction was rolled back). Nothing "
        "to repair: this happens when a paused or cut-off attempt resumes after its retry"
    )


def claim_and_record(conn: WarehouseConnection, entry: LedgerEntry, fence: Fence) -> None:
    """Inside the publishing transaction, after the writes: take the fence and insert the
    ledger row, or raise StaleTransitionError so that the transaction rolls back."""
    dialect = conn.dialect
    if not dialect.capabilities.writable_ctes:
        take_fence(conn, fence.task_run_id, fence.attempt_id, fence.ledger_schema)
        ledger.record(conn, entry, fence.ledger_schema)
        return
    values = [
        bound(dialect, fence.task_run_id, "BIGINT"),
        bound(dialect, fence.attempt_id, "BIGINT"),
        bound(dialect, utc_now(), "TIMESTAMP WITH TIME ZONE"),
    ]
    table = fence_table(fence.ledger_schema).sql
    [claim] = statements.fence_upsert(dialect, table, values, fence.task_run_id)
    row = ledger.row_values(dialect, entry)
    # The ledger row is selected from the claim's RETURNING, which is empty when refused.
    sql = (
        f"WITH claimed AS (\n{claim.sql}\n)\n"
        f"{ledger.insert_into(fence.ledger_schema)}\n"
        f"SELECT {', '.join(value.sql for value in row)} FROM claimed"
    )
    params = [*claim.params, *(value.param for value in row)]
    purpose = (
        f"take the fence of task run {fence.task_run_id} for attempt {fence.attempt_id} "
        "and record it in the ledger"
    )
    if conn.execute(purpose, sql, params) != 1:
        refuse(conn, fence.task_run_id, fence.attempt_id, fence.ledger_schema)
        # Not refused: the attempt already held the fence, so its row goes in on its own.
        ledger.record(conn, entry, fence.ledger_schema)


class TransactionalPublisher(Publisher):
    """Publication.TRANSACTION: the fence row, the data and the ledger row in one transaction."""

    @contextmanager
    def publishing(
        self, conn: WarehouseConnection, target: TargetObject | None, fence: Fence
    ) -> Iterator[None]:
        ensure_ledger(conn, fence.ledger_schema)
        if target is not None:
            # The fence is taken in record, with the ledger row.
            with conn.mutation(target):
                yield
            return
        with conn.transaction():
            take_fence(conn, fence.task_run_id, fence.attempt_id, fence.ledger_schema)
            yield

    def record(self, conn: WarehouseConnection, entry: LedgerEntry, fence: Fence) -> None:
        claim_and_record(conn, entry, fence)

    def applied(
        self, conn: WarehouseConnection, attempt_id: int, ledger_schema: str
    ) -> Counts | None:
        return ledger.applied(conn, attempt_id, ledger_schema)


@contextmanager
def fenced_transaction(
    conn: WarehouseConnection,
    task_run_id: int,
    attempt_id: int,
    schema: str = DEFAULT_LEDGER_SCHEMA,
) -> Iterator[WarehouseConnection]:
    """Writes of a script's own, published as the warehouse publishes an action's, fenced alike."""
    with conn.publisher.publishing(conn, None, Fence(task_run_id, attempt_id, schema)):
        yield conn
