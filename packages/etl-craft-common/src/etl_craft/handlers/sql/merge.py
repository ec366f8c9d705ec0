"""SCD1_MERGE, and the steps it shares with SCD2_MERGE: set-based updates from a deduplicated,
hashed stage."""

from __future__ import annotations

from dataclasses import replace

from etl_craft.core.counts import Counts
from etl_craft.handlers.sql.context import Context, require_columns
from etl_craft.handlers.sql.evolution import add_columns, plan_additions, typed
from etl_craft.handlers.sql.stage import Stage, build_stage, refuse_null_keys, refuse_ties
from etl_craft.handlers.sql.writers import counts, insert_stage
from etl_craft.warehouse import statements
from etl_craft.warehouse.statements import Value


class Merge:
    """The steps both merges share; everything that can refuse runs before the first write."""

    def __init__(self, ctx: Context, needed: tuple[str, ...], why: str) -> None:
        self.ctx = ctx
        self.stage: Stage = build_stage(ctx)
        target = ctx.target_columns()
        self.present = {column.key for column in target}
        require_columns(ctx, self.present, needed, why)
        refuse_null_keys(ctx, self.stage)
        refuse_ties(ctx, self.stage)
        # A change's own time says when it happened, not that something changed.
        skipped = {key.lower() for key in ctx.spec.merge_key}
        if ctx.spec.valid_from_column:
            skipped.add(ctx.spec.valid_from_column.lower())
        names = ctx.spec.compare_columns or tuple(
            column.name for column in self.stage.columns if column.key not in skipped
        )
        self.stage.require("MERGE_COMPARE_COLUMNS", names)
        for name in names:
            # A float the SELECT returns has no stable text, even when the target stores text.
            ctx.conn.dialect.canonical_text(name, self.stage.column(name))
        self.change_hash = ctx.conn.dialect.change_hash("d", typed(target, self.stage, names))
        additions = plan_additions(ctx, self.stage, target)
        add_columns(ctx, additions)
        self.present |= {column.key for column in additions}
        self.deduped = self._dedupe()
        # The rows the writes apply: an SCD2 merge by a source column sets some aside.
        self.changes = self.deduped

    def _dedupe(self) -> str:
        ctx, keys = self.ctx, self.ctx.spec.merge_key
        name = ctx.scratch_name("dedup")
        columns = [column.name for column in self.stage.columns]
        order = ctx.spec.dedupe_order.sql
        ctx.run(
            "keep one row per key",
            statements.dedupe(self.stage.name, name, keys, order, columns, self.change_hash),
        )
        if ctx.conn.dialect.capabilities.index_stage:
            for statement in statements.index_stage(name, keys):
                ctx.run("index and analyze the stage", statement)
        return name

    @property
    def kept(self) -> int:
        return self.ctx.count("count rows kept", statements.count_rows(self.deduped))

    @property
    def duplicates(self) -> int:
        return self.stage.rows - self.kept

    def changed(self) -> str:
        """A current row whose values differ, or that was soft-deleted and comes back."""
        return statements.hash_changed(soft_deletes="delete_flag" in self.present)

    def update(self, purpose: str, assignments: dict[str, Value], condition: str) -> int:
        ctx = self.ctx
        statement = statements.update_from(
            ctx.conn.dialect, ctx.target, self.changes, ctx.spec.merge_key, assignments, condition
        )
        return ctx.run(purpose, statement)

    def insert_missing(self, *, current_only: bool, stamps: dict[str, Value] | None = None) -> int:
        ctx = self.ctx
        where = statements.absent_from(ctx.target, ctx.spec.merge_key, current_only=current_only)
        staged = statements.staged_hash().sql
        return insert_stage(
            ctx, self.changes, self.stage.columns, self.present, staged, where, stamps
        )


def scd1_merge(ctx: Context) -> Counts:
    merge = Merge(ctx, ("HASH_KEY",), "SCD1_MERGE compares HASH_KEY to find changed rows")
    keys = {key.lower() for key in ctx.spec.merge_key}
    assignments = {
        column.name: statements.stage_value(column.name)
        for column in merge.stage.columns
        if column.key not in keys
    }
    assignments["HASH_KEY"] = statements.staged_hash()
    if "delete_flag" in merge.present:
        assignments["DELETE_FLAG"] = statements.flag(False)
    assignments |= ctx.update_stamps(merge.present)
    updated = merge.update("update changed rows", assignments, merge.changed())
    inserted = merge.insert_missing(current_only=False)
    written = counts(
        ctx, merge.stage.rows, inserted=inserted, updated=updated, duplicates=merge.duplicates
    )
    unchanged = merge.kept - inserted - updated
    return replace(written, new_keys=inserted, changed_keys=updated, unchanged_keys=unchanged)
