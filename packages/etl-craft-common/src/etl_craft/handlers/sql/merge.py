"""SCD1_MERGE, and the steps it shares with SCD2_MERGE: set-based updates from a deduplicated,
hashed stage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from etl_craft.core.counts import Counts
from etl_craft.handlers.sql.context import Context, require_columns
from etl_craft.handlers.sql.evolution import add_columns, plan_additions, typed
from etl_craft.handlers.sql.phases import Phase
from etl_craft.handlers.sql.proof import MATCH, NEW, SAME, plan_hashing
from etl_craft.handlers.sql.stage import Stage, fill_stage, probe_stage, refuse_nulls, refuse_ties
from etl_craft.handlers.sql.writers import counts, insert_stage
from etl_craft.warehouse import statements
from etl_craft.warehouse.audit import HASH_TYPE, TIMESTAMP
from etl_craft.warehouse.history import VALID_FROM
from etl_craft.warehouse.statements import Value

# The instant each staged row's version starts (SCD2): an expression over the SELECT's row.
Starts = Callable[[Stage], str]


class Merge:
    """The steps both merges share; everything that can refuse runs before the first write.

    The SELECT is read once, into a stage that carries each row's change hash; a second copy,
    one row per key, is made only when some key has more than one row.
    """

    def __init__(
        self,
        ctx: Context,
        needed: tuple[str, ...],
        why: str,
        starts: Starts | None = None,
        *,
        current_only: bool,
    ) -> None:
        self.ctx = ctx
        stage = probe_stage(ctx)
        target = ctx.target_columns()
        self.present = {column.key for column in target}
        require_columns(ctx, self.present, needed, why)
        stage.require("MERGE_KEY", ctx.spec.merge_key)
        stage.require("MERGE_DEDUPE_ORDER", ctx.spec.dedupe_order.columns)
        columns = typed(target, stage, self._compared(stage))
        dialect = ctx.conn.dialect
        self.hashing = plan_hashing(ctx, stage, target, columns, current_only=current_only)
        change_hash = self.hashing.staged_hash(dialect.change_hash("etl_src", columns))
        computed = {"etl_craft_hash": (dialect.render_type(HASH_TYPE), change_hash)}
        if starts is not None:
            computed[VALID_FROM] = (dialect.render_type(TIMESTAMP), starts(stage))
        if self.hashing.compare:
            computed[MATCH] = ("INTEGER", self.hashing.match())
        self.stage: Stage = fill_stage(ctx, stage, computed, self.hashing.stored_rows())
        with ctx.phases.of(Phase.CHECKS):
            self.kept, most = self._check_keys()
        additions = plan_additions(ctx, self.stage, target)
        add_columns(ctx, additions)
        self.present |= {column.key for column in additions}
        with ctx.phases.of(Phase.HASH):
            self.deduped = self._dedupe() if most > 1 else self.stage.name
            # Statistics for the anti-joins over the whole stage; only the rows that differ
            # (narrow) are joined key by key, so only they get an index.
            self._index(self.deduped, index=False)
        # The rows the writes apply: an SCD2 merge by a source column sets some aside.
        self.changes = self.deduped

    def _compared(self, stage: Stage) -> tuple[str, ...]:
        ctx = self.ctx
        # A change's own time says when it happened, not that something changed.
        skipped = {key.lower() for key in ctx.spec.merge_key}
        if ctx.spec.valid_from_column:
            skipped.add(ctx.spec.valid_from_column.lower())
        names = ctx.spec.compare_columns or tuple(
            column.name for column in stage.columns if column.key not in skipped
        )
        stage.require("MERGE_COMPARE_COLUMNS", names)
        for name in names:
            # A float the SELECT returns has no stable text, even when the target stores text.
            ctx.conn.dialect.canonical_text(name, stage.column(name))
        return names

    def _check_keys(self) -> tuple[int, int]:
        """(distinct keys, the most rows one key has); NULL keys and dedupe ties refused."""
        ctx = self.ctx
        statement = statements.key_copies(self.stage.name, ctx.spec.merge_key)
        row = ctx.conn.fetch_all(f"count the staged keys ({ctx.target})", statement.sql)[0]
        keys, nulls, most = (int(value) for value in row)
        refuse_nulls(ctx, nulls)
        if most > 1:
            refuse_ties(ctx, self.stage)
        return keys, most

    def _dedupe(self) -> str:
        ctx, keys = self.ctx, self.ctx.spec.merge_key
        name = ctx.scratch_name("dedup")
        columns = [column.name for column in ctx.conn.stage_columns(self.stage.name)]
        order = ctx.spec.dedupe_order.sql
        statement = statements.dedupe(self.stage.name, name, keys, order, columns)
        ctx.run("keep one row per key", statement)
        return name

    def _index(self, table: str, *, index: bool = True) -> None:
        if self.ctx.conn.dialect.capabilities.index_stage:
            keys = self.ctx.spec.merge_key
            for statement in statements.index_stage(table, keys, index=index):
                self.ctx.run("index and analyze the stage", statement)

    def narrow(self, *, current_only: bool) -> None:
        """Keep, of the rows the writes apply, those that differ from the target: a staged row
        whose key's row (current version) has its hash is neither updated nor inserted. The
        update and the insert then join the few that differ, not the whole stage."""
        ctx = self.ctx
        delta = ctx.scratch_name("delta")
        same = [statements.current_version()] if current_only else []
        if "delete_flag" in self.present:
            same.append(statements.not_soft_deleted())
        statement = statements.differing(self.changes, delta, ctx.target, ctx.spec.merge_key, same)
        if self.hashing.compare:
            # The stage already knows, from comparing each row with its key's stored row.
            statement = statements.kept_where(self.changes, delta, f"d.{MATCH} <> {SAME}")
        with ctx.phases.of(Phase.HASH):
            ctx.run("keep the staged rows that differ from the target", statement)
            self._index(delta)
        self.changes = delta

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
        with ctx.phases.of(Phase.WRITE):
            return ctx.run(purpose, statement)

    def insert_missing(self, *, current_only: bool, stamps: dict[str, Value] | None = None) -> int:
        ctx = self.ctx
        where = statements.absent_from(ctx.target, ctx.spec.merge_key, current_only=current_only)
        if self.hashing.compare:
            # Known from the comparison: a key with no stored row has none now, and (SCD2) a
            # key whose stored current version differs had it closed by the update before.
            where = "" if current_only else f"d.{MATCH} = {NEW}"
        staged = statements.staged_hash().sql
        return insert_stage(
            ctx, self.changes, self.stage.columns, self.present, staged, where, stamps
        )


def scd1_merge(ctx: Context) -> Counts:
    merge = Merge(
        ctx, ("HASH_KEY",), "SCD1_MERGE compares HASH_KEY to find changed rows", current_only=False
    )
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
    merge.narrow(current_only=False)
    updated = merge.update("update changed rows", assignments, merge.changed())
    inserted = merge.insert_missing(current_only=False)
    merge.hashing.settle(merge.deduped)
    written = counts(
        ctx, merge.stage.rows, inserted=inserted, updated=updated, duplicates=merge.duplicates
    )
    unchanged = merge.kept - inserted - updated
    return replace(written, new_keys=inserted, changed_keys=updated, unchanged_keys=unchanged)
