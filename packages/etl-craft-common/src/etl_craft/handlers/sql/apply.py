"""The entry point: apply one SQL task attempt to its target in one warehouse transaction."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable

from etl_craft.core.counts import Counts
from etl_craft.core.errors import WarehouseError
from etl_craft.core.faults import fault_point
from etl_craft.core.time import utc_now
from etl_craft.handlers.sql.context import Context
from etl_craft.handlers.sql.history import scd2_merge
from etl_craft.handlers.sql.merge import scd1_merge
from etl_craft.handlers.sql.phases import Phase
from etl_craft.handlers.sql.spec import Action, SqlActionSpec
from etl_craft.handlers.sql.writers import (
    append_table,
    create_table,
    delete_rows,
    drop_table,
    overwrite_table,
    setup_table,
)
from etl_craft.warehouse import hash_record, statements
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.ledger import LedgerEntry
from etl_craft.warehouse.parsing import parse_select
from etl_craft.warehouse.publication import Fence

log = logging.getLogger("etl_craft.handlers.sql")

ACTIONS: dict[Action, Callable[[Context], Counts]] = {
    Action.CREATE_TABLE: create_table,
    Action.SETUP_TABLE: setup_table,
    Action.OVERWRITE_TABLE: overwrite_table,
    Action.APPEND_TABLE: append_table,
    Action.SCD1_MERGE: scd1_merge,
    Action.SCD2_MERGE: scd2_merge,
    Action.DELETE_ROWS: delete_rows,
    Action.DROP_TABLE: drop_table,
}

# Actions that write HASH_KEY values no merge contract describes, or drop the table: a merge's
# record of its target's hashes ends with them. SETUP_TABLE only creates an empty table or adds
# etl-craft's own columns, DELETE_ROWS only removes or flags rows, and the merges settle their
# record themselves (handlers.sql.proof).
REHASHES = frozenset(
    {Action.CREATE_TABLE, Action.OVERWRITE_TABLE, Action.APPEND_TABLE, Action.DROP_TABLE}
)


def run_sql_action(conn: WarehouseConnection, spec: SqlActionSpec) -> Counts:
    """Apply the action; its data and its ledger entry are published together or not at all.

    The warehouse's publication checks the task run's fence, so a later attempt that already
    published refuses this one with nothing of it visible.
    """
    select = None
    if spec.source_sql is not None:
        select = parse_select(spec.source_sql, conn.dialect.sqlglot_name)
    ctx = Context(conn, spec, utc_now(), secrets.token_hex(3), select)
    ctx.hash_records = conn.dialect.capabilities.hash_record
    fence = Fence(spec.task_run_id, spec.attempt_id, spec.ledger_schema)
    log.info("%s into %s (attempt %s)", spec.action, spec.target, spec.attempt_id)
    fault_point("sql_before_target_lock")
    try:
        with conn.publisher.publishing(conn, spec.target, fence):
            fault_point("sql_after_target_lock")
            counts = ACTIONS[spec.action](ctx)
            if ctx.hash_records and spec.action in REHASHES:
                key = hash_record.record_key(conn, spec.target)
                hash_record.forget(conn, spec.ledger_schema, key)
            entry = LedgerEntry(
                spec.attempt_id,
                spec.task_run_id,
                spec.action.value,
                spec.target.sql,
                counts,
                utc_now(),
            )
            conn.publisher.record(conn, entry, fence)
            _drop_scratch(ctx)
            ctx.phases.enter(Phase.COMMIT)
    except BaseException:
        _forget_scratch(ctx)
        raise
    log.info("%s into %s: %s", spec.action, spec.target, counts)
    seconds = ctx.phases.stop()
    log.debug(
        "%s into %s took %s",
        spec.action,
        spec.target,
        ctx.phases.describe(),
        extra={"etl_craft_phases": seconds},
    )
    return counts


def _forget_scratch(ctx: Context) -> None:
    """After a failure: a rollback already removed them, unless the connection itself broke."""
    try:
        _drop_scratch(ctx)
    except WarehouseError as error:
        log.warning("couldn't drop the scratch tables of %s: %s", ctx.target, error)


def _drop_scratch(ctx: Context) -> None:
    # Temporary tables outlive a commit on both warehouses; dropped so a long-lived
    # connection doesn't collect them. After a rollback they are already gone.
    for name in ctx.scratch:
        ctx.conn.execute(f"drop scratch table {name}", statements.drop_table(name).sql)
    ctx.scratch.clear()
