"""CREATE_TABLE, SETUP_TABLE, OVERWRITE_TABLE, APPEND_TABLE, DELETE_ROWS and DROP_TABLE."""

from __future__ import annotations

import logging

from etl_craft.core.counts import Counts
from etl_craft.handlers.sql.context import Context, require_columns
from etl_craft.handlers.sql.evolution import add_columns, plan_additions, typed
from etl_craft.handlers.sql.phases import Phase
from etl_craft.handlers.sql.spec import DeleteMode
from etl_craft.handlers.sql.stage import (
    Stage,
    build_stage,
    described_columns,
    probe_stage,
    refuse_null_keys,
    refuse_nulls,
)
from etl_craft.warehouse import statements
from etl_craft.warehouse.audit import HISTORY_COLUMNS, declared, written_columns
from etl_craft.warehouse.dialect import Column
from etl_craft.warehouse.statements import Value

log = logging.getLogger("etl_craft.handlers.sql")


def counts(
    ctx: Context,
    source: int | None,
    *,
    inserted: int = 0,
    updated: int = 0,
    deleted: int = 0,
    duplicates: int = 0,
    target: int | None = None,
) -> Counts:
    """The attempt's counts; the target, which exists, has its rows counted unless the caller
    knows them."""
    if target is None:
        target = ctx.count("count the target's rows", statements.count_rows(ctx.target))
    return Counts(
        source=source,
        target=target,
        inserted=inserted,
        updated=updated,
        deleted=deleted,
        duplicates=duplicates,
        rows_written=inserted + updated + deleted,
    )


def insert_stage(
    ctx: Context,
    source: str,
    business: tuple[Column, ...],
    present: set[str],
    change_hash: str,
    where: str = "",
    stamps: dict[str, Value] | None = None,
) -> int:
    """Insert the source's rows (alias d); ``stamps`` replace the default audit values."""
    values = {column.name: statements.stage_value(column.name) for column in business}
    row_id = statements.row_id_value(ctx.target)
    values |= ctx.insert_stamps(ctx.inserted(present), change_hash, row_id) | (stamps or {})
    with ctx.phases.of(Phase.WRITE):
        return ctx.run("insert rows", statements.insert_from(ctx.target, source, values, where))


def _plain_hash(ctx: Context, stage: Stage, target: tuple[Column, ...]) -> str:
    # Writers that don't compare still stamp HASH_KEY; floats are hashed leniently there.
    columns = typed(target, stage, tuple(column.name for column in stage.columns))
    return ctx.conn.dialect.change_hash("d", columns, strict=False)


def _table_columns(ctx: Context, selected: tuple[Column, ...]) -> tuple[Column, ...]:
    dialect = ctx.conn.dialect
    written = declared(dialect, written_columns(history=ctx.spec.history_columns))
    if dialect.capabilities.identity_columns:
        # A new target's ROW_ID is numbered by the warehouse, with no MAX(ROW_ID) read.
        written = tuple(
            Column(column.name, statements.identity(column.type))
            if column.key == "row_id"
            else column
            for column in written
        )
    return selected + written


def _create(ctx: Context, selected: tuple[Column, ...]) -> set[str]:
    columns = _table_columns(ctx, selected)
    with ctx.phases.of(Phase.WRITE):
        ctx.conn.lock_schema(ctx.spec.target.schema)
        ctx.run("create the schema", statements.create_schema(ctx.spec.target.schema))
        ctx.run("create the table", statements.create_table(ctx.target, columns))
    return {column.key for column in columns}


def create_table(ctx: Context) -> Counts:
    stage = build_stage(ctx)
    ctx.run("drop the old table", statements.drop_table(ctx.target))
    present = _create(ctx, stage.columns)
    inserted = insert_stage(ctx, stage.name, stage.columns, present, _plain_hash(ctx, stage, ()))
    return counts(ctx, stage.rows, inserted=inserted, target=inserted)


def setup_table(ctx: Context) -> Counts:
    selected = _selected_columns(ctx)
    if not ctx.conn.exists(ctx.spec.target):
        _create(ctx, selected)
        return counts(ctx, 0, target=0)
    if ctx.spec.history_columns:
        # A history table of an older etl-craft gets the columns an SCD2_MERGE now writes.
        present = {column.key for column in ctx.target_columns()}
        add_missing(ctx, present, HISTORY_COLUMNS)
    return counts(ctx, 0)


def _selected_columns(ctx: Context) -> tuple[Column, ...]:
    """The SELECT's columns, checked, with no row read: described where the warehouse can,
    else from an empty stage."""
    described = described_columns(ctx)
    return probe_stage(ctx).columns if described is None else described


def add_missing(ctx: Context, present: set[str], managed: tuple[Column, ...]) -> set[str]:
    """Add the columns etl-craft writes itself that the target lacks; the new set of names."""
    missing = declared(
        ctx.conn.dialect, tuple(column for column in managed if column.key not in present)
    )
    if missing:
        log.info("adding %s to %s", ", ".join(column.name for column in missing), ctx.target)
        add_columns(ctx, missing)
    return present | {column.key for column in missing}


def _prepare_existing(ctx: Context) -> tuple[Stage, tuple[Column, ...], set[str]]:
    stage = build_stage(ctx)
    target = ctx.target_columns()
    additions = plan_additions(ctx, stage, target)
    add_columns(ctx, additions)
    return stage, target, {column.key for column in target}


def overwrite_table(ctx: Context) -> Counts:
    stage, target, present = _prepare_existing(ctx)
    with ctx.phases.of(Phase.WRITE):
        statement = statements.delete_where(ctx.conn.dialect, ctx.target)
        deleted = ctx.run("delete every row", statement)
    change_hash = _plain_hash(ctx, stage, target)
    inserted = insert_stage(ctx, stage.name, stage.columns, present, change_hash)
    return counts(ctx, stage.rows, inserted=inserted, deleted=deleted, target=inserted)


def append_table(ctx: Context) -> Counts:
    stage, target, present = _prepare_existing(ctx)
    deleted = 0
    if "task_run_id" in present:
        # A retried attempt of the same task run replaces what an earlier attempt appended.
        condition = statements.of_task_run(ctx.conn.dialect)
        statement = statements.delete_where(
            ctx.conn.dialect, ctx.target, condition, [ctx.spec.task_run_id]
        )
        with ctx.phases.of(Phase.WRITE):
            deleted = ctx.run("delete this task run's earlier rows", statement)
    else:
        log.warning(
            "%s has no TASK_RUN_ID column, so a retry of this append can duplicate rows; "
            "add TASK_RUN_ID BIGINT to make appends retry-safe",
            ctx.target,
        )
    change_hash = _plain_hash(ctx, stage, target)
    inserted = insert_stage(ctx, stage.name, stage.columns, present, change_hash)
    return counts(ctx, stage.rows, inserted=inserted, deleted=deleted)


def delete_rows(ctx: Context) -> Counts:
    stage = build_stage(ctx)
    present = {column.key for column in ctx.target_columns()}
    match = statements.matching(stage.name, ctx.spec.merge_key)
    if ctx.spec.delete_mode is DeleteMode.HARD:
        with ctx.phases.of(Phase.CHECKS):
            before = _refuse_null_keys_and_count(ctx, stage)
        statement = statements.delete_where(ctx.conn.dialect, ctx.target, match)
        with ctx.phases.of(Phase.WRITE):
            deleted = ctx.run("delete matching rows", statement)
        return counts(ctx, stage.rows, deleted=deleted, target=before - deleted)
    with ctx.phases.of(Phase.CHECKS):
        refuse_null_keys(ctx, stage)
    require_columns(ctx, present, ("DELETE_FLAG",), "a SOFT delete flags rows")
    # Already-deleted rows keep their flag, stamps and run ids: a repeat changes nothing.
    condition = f"{match} AND {statements.not_soft_deleted()}"
    if "active_flag" in present:
        condition += f" AND {statements.current_version()}"
    assignments = {"DELETE_FLAG": statements.flag(True)} | ctx.update_stamps(present)
    statement = statements.update_where(ctx.target, assignments, condition)
    with ctx.phases.of(Phase.WRITE):
        deleted = ctx.run("flag matching rows deleted", statement)
    return counts(ctx, stage.rows, deleted=deleted)


def _refuse_null_keys_and_count(ctx: Context, stage: Stage) -> int:
    """Refuse NULL merge keys and count the target's rows, in one statement: the rows there
    before a HARD delete, which leaves that many less the rows it deletes. Counted before,
    because a count after the delete reads past the rows it deleted, which on DuckDB costs
    several times a plain count."""
    keys = ctx.spec.merge_key
    stage.require("MERGE_KEY", keys)
    nulls = statements.null_keys(stage.name, keys)
    target = statements.count_rows(ctx.target)
    [(null_rows, rows)] = ctx.conn.fetch_all(
        f"count NULL merge keys and the target's rows ({ctx.target})",
        f"SELECT ({nulls.sql}), ({target.sql})",
    )
    refuse_nulls(ctx, int(null_rows or 0))
    return int(rows or 0)


def drop_table(ctx: Context) -> Counts:
    if not ctx.conn.exists(ctx.spec.target):
        return Counts(
            source=None, target=0, inserted=0, updated=0, deleted=0, duplicates=0, rows_written=0
        )
    rows = ctx.count("count the rows dropped", statements.count_rows(ctx.target))
    ctx.run("drop the table", statements.drop_table(ctx.target))
    return counts(ctx, None, deleted=rows, target=0)
