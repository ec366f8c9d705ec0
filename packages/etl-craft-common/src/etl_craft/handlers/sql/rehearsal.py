"""An action rehearsed: the SELECT's rows and what the action writes, seen and rolled back.

The counts come from running the action's own statements (handlers.sql.actions.ACTIONS) in a
warehouse transaction that is always rolled back, under the target's mutation lock as a run
takes it, so they are what a run starting now would write, by the same keys and comparisons.
Neither the ledger nor the fence is touched: nothing of a rehearsal outlives it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from etl_craft.core.counts import Counts
from etl_craft.core.errors import EtlCraftError, MetadataError, SqlGuardError, WarehouseError
from etl_craft.core.time import utc_now
from etl_craft.handlers.sql.apply import ACTIONS
from etl_craft.handlers.sql.context import Context
from etl_craft.handlers.sql.spec import SqlActionSpec
from etl_craft.warehouse import statements
from etl_craft.warehouse.connection import Row, WarehouseConnection
from etl_craft.warehouse.dialect import Column
from etl_craft.warehouse.parsing import ParsedSelect, parse_select

# What a run of the action would fail with: shown as the rehearsal's outcome, not raised.
REFUSALS = (SqlGuardError, MetadataError, WarehouseError)


@dataclass(frozen=True)
class DuplicateKeys:
    keys: int  # keys of MERGE_KEY with more than one row
    rows: int  # the rows beyond one per key
    examples: tuple[Row, ...]  # up to five such keys, in key order


@dataclass(frozen=True)
class Sample:
    columns: tuple[Column, ...]  # the SELECT's output, typed as the warehouse stages it
    rows: tuple[Row, ...]  # the first ones, in the order the stage holds them
    total: int
    duplicates: DuplicateKeys | None  # None without a MERGE_KEY the SELECT returns


@dataclass(frozen=True)
class ActionRehearsal:
    target_before: int | None  # None: the target doesn't exist yet
    counts: Counts | None  # None when the action refused
    refusal: EtlCraftError | None


def sample_select(conn: WarehouseConnection, spec: SqlActionSpec, limit: int) -> Sample:
    """The SELECT staged as a run stages it; its columns, row count and first ``limit`` rows.

    Raises WarehouseError when the warehouse refuses the SELECT.
    """
    parsed = _parsed(conn, spec)
    ctx = _context(conn, spec, parsed)
    with conn.rehearsal():
        name = ctx.scratch_name("preview")
        ctx.run("stage the SELECT", statements.create_stage(name, parsed.sql))
        columns = conn.stage_columns(name)
        total = ctx.count("count the staged rows", statements.count_rows(name))
        first = statements.first_rows(conn.dialect, name, limit)
        rows = conn.fetch_all(f"read the first staged rows ({ctx.target})", first.sql, first.params)
        duplicates = _duplicates(ctx, name, columns)
    return Sample(columns, tuple(rows), total, duplicates)


def rehearse_action(conn: WarehouseConnection, spec: SqlActionSpec) -> ActionRehearsal:
    """The action's counts as it computes them, or the error it would fail with; rolled back."""
    parsed = None if spec.source_sql is None else _parsed(conn, spec)
    with conn.rehearsal(spec.target):
        before = None
        if conn.exists(spec.target):
            before = int(
                conn.fetch_value(
                    f"count the rows of {spec.target}",
                    statements.count_rows(spec.target.sql).sql,
                )
            )
        try:
            counts = ACTIONS[spec.action](_context(conn, spec, parsed))
        except REFUSALS as error:
            return ActionRehearsal(before, None, error)
    return ActionRehearsal(before, counts, None)


def _parsed(conn: WarehouseConnection, spec: SqlActionSpec) -> ParsedSelect:
    if spec.source_sql is None:
        raise MetadataError(f"{spec.action} into {spec.target} has no SELECT to preview")
    return parse_select(spec.source_sql, conn.dialect.sqlglot_name)


def _context(
    conn: WarehouseConnection, spec: SqlActionSpec, parsed: ParsedSelect | None
) -> Context:
    return Context(conn, spec, utc_now(), secrets.token_hex(3), parsed)


def _duplicates(ctx: Context, stage: str, columns: tuple[Column, ...]) -> DuplicateKeys | None:
    keys = ctx.spec.merge_key
    returned = {column.key for column in columns}
    if not keys or any(key.lower() not in returned for key in keys):
        return None
    statement = statements.duplicate_keys(stage, keys)
    found = ctx.conn.fetch_all(f"look for duplicate keys ({ctx.target})", statement.sql)
    if not found:
        return DuplicateKeys(0, 0, ())
    width = len(keys)
    return DuplicateKeys(
        int(found[0][width]), int(found[0][width + 1]), tuple(row[:width] for row in found)
    )
