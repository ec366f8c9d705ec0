"""SCD2_MERGE by a source column: change times that don't move a key's history forward.

A source's times come from its own clock and its own loads: a value corrected without touching
updated_at, an older extract replayed, a key deleted and restored with its old time. Refusing
those would refuse every later run too, since the source keeps returning them, so by default
each is settled as dbt's timestamp strategy settles it (a change without a newer time is no
change, an earlier time is ignored for its key, a returning key reopens no earlier than the
batch), counted and logged; SCD2_STALE_ROWS = REFUSE refuses instead, naming the keys and the
way past.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass

from etl_craft.core.errors import SqlGuardError
from etl_craft.handlers.sql.context import Context
from etl_craft.handlers.sql.merge import Merge
from etl_craft.handlers.sql.spec import StaleRows
from etl_craft.warehouse import history
from etl_craft.warehouse.audit import TIMESTAMP

log = logging.getLogger("etl_craft.handlers.sql")


@dataclass(frozen=True)
class Timing:
    """The staged keys of one timing (etl_craft.warehouse.history.SAME_TIME, STALE, REOPENED)."""

    name: str
    count: int
    examples: list[str]

    def describe(self, column: str) -> str:
        fact, _ = _SAYING[self.name]
        return f"{self.count} {fact.format(column=column)}: {', '.join(self.examples)}"

    def outcome(self, column: str) -> str:
        return _SAYING[self.name][1].format(column=column)


_SAYING = {
    history.SAME_TIME: ("key(s) whose values change without a newer {column}", "no change"),
    history.STALE: ("key(s) whose {column} is earlier than their history", "left as they are"),
    history.REOPENED: (
        "returning key(s) whose {column} is earlier than their closing",
        "reopened at the batch's latest {column}",
    ),
}


@dataclass(frozen=True)
class Timings:
    found: dict[str, Timing]

    def count(self, name: str) -> int:
        return self.found[name].count if name in self.found else 0


def settle_times(ctx: Context, merge: Merge, *, soft_deletes: bool) -> Timings:
    """Mark the staged keys whose time doesn't move them forward and set aside all but the
    reopened ones; refused instead under SCD2_STALE_ROWS = REFUSE."""
    stage, keys = merge.deduped, ctx.spec.merge_key
    batch = ctx.conn.fetch_value(
        f"read the snapshot's time ({ctx.target})", history.latest_start(stage).sql
    )
    if batch is None:
        return Timings({})
    statements = history.settle_times(
        ctx.target, stage, keys, ctx.bind(batch, TIMESTAMP), soft_deletes=soft_deletes
    )
    for statement in statements:
        ctx.run("set aside times that don't move their key forward", statement)
    column = str(ctx.spec.valid_from_column)
    rows = ctx.conn.fetch_all(
        f"read the keys set aside ({ctx.target})", history.settled(stage, keys, column).sql
    )
    timings = _timings(ctx, rows)
    described = [timing.describe(column) for timing in timings.found.values()]
    if described and ctx.spec.stale_rows is StaleRows.REFUSE:
        raise SqlGuardError(
            f"SCD2_STALE_ROWS is REFUSE and the SELECT returns, for {ctx.target}, "
            f"{'; '.join(described)}; {remedy(ctx)}"
        )
    for timing in timings.found.values():
        log.warning(
            "SCD2_MERGE into %s: %s; %s (SCD2_STALE_ROWS = IGNORE)",
            ctx.target,
            timing.describe(column),
            timing.outcome(column),
        )
    merge.changes = history.applicable(stage)
    return timings


def _timings(ctx: Context, rows: list[tuple[object, ...]]) -> Timings:
    """Per timing, in the order of _SAYING: its count and up to five keys with their times."""
    width = len(ctx.spec.merge_key)
    examples: dict[str, list[str]] = defaultdict(list)
    counts: dict[str, int] = {}
    for row in rows:
        name = str(row[0])
        key = " and ".join(
            f"{column}={value!r}"
            for column, value in zip(ctx.spec.merge_key, row[1:], strict=False)
        )
        own, start = row[1 + width], row[2 + width]
        moved = f" (the batch's {start})" if name == history.REOPENED else ""
        examples[name].append(f"{key} at {own}{moved}")
        counts[name] = int(str(row[-1]))
    found = {name: Timing(name, counts[name], examples[name]) for name in _SAYING if name in counts}
    return Timings(found)


def remedy(ctx: Context) -> str:
    column = ctx.spec.valid_from_column
    return (
        f"load each key's changes in order of {column}, or correct the times the SELECT "
        f"returns; or set SCD2_STALE_ROWS = IGNORE on the task to leave such keys as they are "
        f"and count them (a returning key then reopens at the batch's latest {column})"
    )
