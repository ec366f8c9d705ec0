"""SCD2_MERGE: history in versions, each valid from VALID_FROM until VALID_TO.

Every case keeps at most one current version per key and no gaps or overlaps: a new version
starts where the one it replaces ends, at the key's validity instant (SCD2_VALID_FROM), which
must be later than any instant the key's history already has (a source's own times that aren't
are settled by SCD2_STALE_ROWS, see timing). Keys a full snapshot no longer returns are kept,
closed, or closed and followed by a deletion version (SCD2_MISSING_KEYS); an empty snapshot
closes nothing unless ALLOW_EMPTY_SNAPSHOT says so. Everything that can refuse runs before the
first write.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time
from functools import partial

from etl_craft.core.counts import Counts
from etl_craft.core.errors import SqlGuardError
from etl_craft.handlers.sql.context import Context, require_columns
from etl_craft.handlers.sql.merge import Merge
from etl_craft.handlers.sql.phases import Phase
from etl_craft.handlers.sql.spec import MissingKeys, StaleRows, ValidFrom
from etl_craft.handlers.sql.stage import Stage
from etl_craft.handlers.sql.timing import Timings, remedy, settle_times
from etl_craft.handlers.sql.writers import add_missing, counts
from etl_craft.warehouse import history, statements
from etl_craft.warehouse.audit import CLOSING_COLUMNS, MANAGED_NAMES, TIMESTAMP
from etl_craft.warehouse.statements import Value

log = logging.getLogger("etl_craft.handlers.sql")

NEEDED = ("HASH_KEY", "ACTIVE_FLAG", "VALID_FROM", "VALID_TO")


@dataclass(frozen=True)
class Missing:
    """The current versions of keys the snapshot lacks, and the instant they end."""

    condition: str
    close_at: Value
    left_open: int = 0  # started at or after close_at, so left current (SCD2_STALE_ROWS)


def scd2_merge(ctx: Context) -> Counts:
    merge = Merge(
        ctx,
        NEEDED,
        "SCD2_MERGE keeps history in versions marked by ACTIVE_FLAG, VALID_FROM and VALID_TO",
        partial(_starts, ctx),
        current_only=True,
    )
    merge.present = add_missing(ctx, merge.present, CLOSING_COLUMNS)
    soft = "delete_flag" in merge.present
    with ctx.phases.of(Phase.CHECKS):
        _refuse_undated(ctx, merge)
        bounds = _bounds(ctx, soft)
        timings = _settle(ctx, merge, soft, bounds)
        missing = _missing(ctx, merge, bounds)
    changed, closed, opened = _apply_changes(ctx, merge, soft, bounds)
    with ctx.phases.of(Phase.WRITE):
        deletions, gone = _close_missing(ctx, merge, missing)
    merge.hashing.settle(merge.deduped)
    written = counts(
        ctx,
        merge.stage.rows,
        target=bounds.rows + opened + deletions,
        inserted=opened + deletions,
        updated=closed,
        deleted=gone,
        duplicates=merge.duplicates,
    )
    new = opened - changed
    keys = replace(
        written, new_keys=new, changed_keys=changed, unchanged_keys=merge.kept - new - changed
    )
    return keys if timings is None else _with_timings(keys, timings, missing)


def _apply_changes(ctx: Context, merge: Merge, soft: bool, bounds: Bounds) -> tuple[int, int, int]:
    """Close the changed keys' versions and open the new ones: (changed keys, closed, opened)."""
    merge.narrow(current_only=True)
    changed = None
    if bounds.deleted_current:
        statement = history.changed_keys(
            ctx.target, merge.changes, ctx.spec.merge_key, soft_deletes=soft
        )
        changed = ctx.count("count changed keys", statement)
    start = Value(f"d.{history.VALID_FROM}")
    # The closed version keeps its DELETE_FLAG; the new version starts undeleted.
    closed = merge.update(
        "close changed versions",
        ctx.close_stamps(merge.present, start),
        statements.current_version(merge.changed()),
    )
    opened = merge.insert_missing(current_only=True, stamps={"VALID_FROM": start})
    # One current version per key, none of them a deletion: each one closed is a changed key.
    return (closed if changed is None else changed), closed, opened


def _with_timings(written: Counts, timings: Timings, missing: Missing | None) -> Counts:
    left_open = 0 if missing is None else missing.left_open
    return replace(
        written,
        stale_keys=timings.count(history.STALE) + left_open,
        same_time_keys=timings.count(history.SAME_TIME),
        reopened_keys=timings.count(history.REOPENED),
    )


def _starts(ctx: Context, stage: Stage) -> str:
    """The instant each staged key's new version would start."""
    if ctx.spec.valid_from is ValidFrom.COLUMN:
        column = str(ctx.spec.valid_from_column)
        stage.require("SCD2_VALID_FROM_COLUMN", (column,))
        return f"CAST(etl_src.{column} AS {ctx.conn.dialect.render_type(TIMESTAMP)})"
    return statements.instant(ctx.conn.dialect, _run_start(ctx))


def _refuse_undated(ctx: Context, merge: Merge) -> None:
    if ctx.spec.valid_from is not ValidFrom.COLUMN:
        return
    column = str(ctx.spec.valid_from_column)
    nulls = ctx.count(
        "count NULL validity times",
        statements.count_rows(merge.deduped, f"{history.VALID_FROM} IS NULL"),
    )
    if nulls:
        raise SqlGuardError(
            f"the SELECT returns {nulls} key(s) whose SCD2_VALID_FROM_COLUMN {column} is "
            f"NULL; {ctx.target} can't date their versions: filter those rows out or "
            f"COALESCE {column} to the time of the change"
        )


@dataclass(frozen=True)
class Bounds:
    """What one scan of the target tells before the merge reads it key by key."""

    latest_start: datetime | None
    latest_end: datetime | None
    rows: int
    deleted_current: int  # current versions flagged deleted

    def before(self, instant: object) -> bool:
        """No version starts at or after ``instant``, nor ends after it."""
        if not isinstance(instant, datetime):
            return False
        start, end = _utc(self.latest_start), _utc(self.latest_end)
        return (start is None or start < instant) and (end is None or end <= instant)


def _utc(value: datetime | None) -> datetime | None:
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def _bounds(ctx: Context, soft: bool) -> Bounds:
    statement = history.bounds(ctx.target, soft_deletes=soft)
    row = ctx.conn.fetch_all(f"read the history's bounds ({ctx.target})", statement.sql)[0]
    return Bounds(row[0], row[1], int(row[2]), int(row[3]))


def _settle(ctx: Context, merge: Merge, soft: bool, bounds: Bounds) -> Timings | None:
    """A source's own times are settled by SCD2_STALE_ROWS; the run's never go backwards."""
    if ctx.spec.valid_from is ValidFrom.COLUMN:
        return settle_times(ctx, merge, soft_deletes=soft)
    if not bounds.before(_run_start(ctx)):
        _refuse_backwards(ctx, merge, soft)
    return None


def _refuse_backwards(ctx: Context, merge: Merge, soft: bool) -> None:
    keys = ctx.spec.merge_key
    statement = history.backwards(ctx.target, merge.deduped, keys, soft_deletes=soft)
    rows = ctx.conn.fetch_all(f"look for validity going backwards ({ctx.target})", statement.sql)
    if rows:
        raise SqlGuardError(
            f"SCD2_VALID_FROM ({ctx.spec.valid_from}) goes backwards for {rows[0][-1]} key(s) "
            f"of {ctx.target}: {_examples(ctx, rows, 'would open a version at')}, no later "
            f"than a start or end its history already has; {_remedy(ctx)}"
        )


def _examples(ctx: Context, rows: list[tuple[object, ...]], saying: str) -> str:
    width = len(ctx.spec.merge_key)
    return "; ".join(
        " and ".join(
            f"{key}={value!r}" for key, value in zip(ctx.spec.merge_key, row, strict=False)
        )
        + f" {saying} {row[width]}"
        for row in rows
    )


def _remedy(ctx: Context) -> str:
    """Each source of validity goes backwards for its own reason."""
    if ctx.spec.valid_from is ValidFrom.COLUMN:
        return f"a key's versions must follow each other in time: {remedy(ctx)}"
    if ctx.spec.valid_from is ValidFrom.RUN_DATE:
        return (
            "a key's versions must follow each other in time: run the backfill's dates in "
            "order, or run the task for a later run date"
        )
    return "the history holds times later than this attempt's clock: check the warehouse's data"


def _missing(ctx: Context, merge: Merge, bounds: Bounds) -> Missing | None:
    """The missing keys' versions to end, checked; None when SCD2_MISSING_KEYS is KEEP."""
    mode = ctx.spec.missing_keys
    if mode is MissingKeys.KEEP:
        return None
    if mode is MissingKeys.NEW_RECORD:
        require_columns(ctx, merge.present, ("DELETE_FLAG",), "NEW_RECORD flags deletion versions")
    keys = ctx.spec.merge_key
    condition = history.missing(merge.deduped, keys, only_live=mode is MissingKeys.NEW_RECORD)
    _refuse_empty(ctx, merge, condition)
    close_at = _close_at(ctx, merge)
    if close_at is None:
        if ctx.count("count missing keys", statements.count_rows(f"{ctx.target} t", condition)):
            raise SqlGuardError(
                f"the SELECT returns no rows, so SCD2_VALID_FROM_COLUMN gives no time at which "
                f"to close the current keys of {ctx.target} (SCD2_MISSING_KEYS = {mode}); "
                "check the source, or run with SCD2_VALID_FROM = RUN_TIME or RUN_DATE"
            )
        return None
    if bounds.before(close_at.param):
        return Missing(condition, close_at)
    statement = history.missing_not_after(ctx.target, condition, keys, close_at)
    rows = ctx.conn.fetch_all(
        f"look for missing keys closed too early ({ctx.target})", statement.sql, statement.params
    )
    if not rows:
        return Missing(condition, close_at)
    found = (
        f"SCD2_MISSING_KEYS = {mode} would close the current version of {rows[0][-1]} key(s) "
        f"of {ctx.target} the SELECT doesn't return at {close_at.param}, no later than it "
        f"started: {_examples(ctx, rows, 'started at')}"
    )
    if ctx.spec.valid_from is not ValidFrom.COLUMN or ctx.spec.stale_rows is StaleRows.REFUSE:
        raise SqlGuardError(f"{found}; {_remedy(ctx)}")
    log.warning("%s; left current (SCD2_STALE_ROWS = IGNORE)", found)
    left_open = history.started_before_batch(condition, merge.deduped)
    return Missing(left_open, close_at, int(str(rows[0][-1])))


def _refuse_empty(ctx: Context, merge: Merge, condition: str) -> None:
    """An empty full snapshot more likely means a load upstream found nothing than that every
    key was deleted: closing them all needs the task's word."""
    if merge.stage.rows or ctx.spec.allow_empty_snapshot:
        return
    closing = ctx.count(
        "count the keys an empty snapshot would close",
        statements.count_rows(f"{ctx.target} t", condition),
    )
    if closing:
        mode = ctx.spec.missing_keys
        deleted = " and mark them deleted" if mode is MissingKeys.NEW_RECORD else ""
        raise SqlGuardError(
            f"the SELECT returns no rows, so SCD2_MISSING_KEYS = {mode} would close all "
            f"{closing} current key(s) of {ctx.target}{deleted}; nothing was written. Check "
            "that the source was loaded, or set ALLOW_EMPTY_SNAPSHOT = Y on the task if the "
            "snapshot really is empty"
        )


def _close_at(ctx: Context, merge: Merge) -> Value | None:
    """When a missing key's version ends: the snapshot's latest change time, or the run's."""
    if ctx.spec.valid_from is not ValidFrom.COLUMN:
        return ctx.bind(_run_start(ctx), TIMESTAMP)
    latest = ctx.conn.fetch_value(
        f"read the snapshot's time ({ctx.target})", history.latest_start(merge.deduped).sql
    )
    return None if latest is None else ctx.bind(latest, TIMESTAMP)


def _run_start(ctx: Context) -> datetime:
    if ctx.spec.valid_from is ValidFrom.RUN_DATE:
        return datetime.combine(ctx.spec.run_date, time(), UTC)
    return ctx.now


def _close_missing(ctx: Context, merge: Merge, missing: Missing | None) -> tuple[int, int]:
    """(deletion versions opened, versions of missing keys closed)."""
    if missing is None:
        return 0, 0
    opened = 0
    if ctx.spec.missing_keys is MissingKeys.NEW_RECORD:
        opened = _open_deletions(ctx, merge, missing)
    assignments = ctx.close_stamps(merge.present, missing.close_at)
    statement = statements.update_where(ctx.target, assignments, missing.condition)
    return opened, ctx.run("close the versions of missing keys", statement)


def _open_deletions(ctx: Context, merge: Merge, missing: Missing) -> int:
    """A deletion version per missing key: its last values, flagged deleted, from close_at."""
    business = {
        column: statements.stage_value(column) for column in sorted(merge.present - MANAGED_NAMES)
    }
    row_id = statements.row_id_value(ctx.target)
    values = business | ctx.insert_stamps(ctx.inserted(merge.present), "d.HASH_KEY", row_id)
    values |= {"DELETE_FLAG": statements.flag(True), "VALID_FROM": missing.close_at}
    source = history.current_of(ctx.target, missing.condition)
    return ctx.run("open deletion versions", statements.insert_from(ctx.target, source, values))
