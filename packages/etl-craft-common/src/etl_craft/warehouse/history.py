"""SCD2 history statements over the target (alias t) and the deduplicated stage (alias d).

A version is valid from VALID_FROM (inclusive) to VALID_TO (exclusive, NULL while current);
the stage carries each key's start in etl_craft_valid_from, and, when the starts come from the
source, in etl_craft_timing why a start doesn't move its key's history forward (NULL when it
does): SAME_TIME, STALE or REOPENED.
"""

from __future__ import annotations

from collections.abc import Sequence

from etl_craft.warehouse.statements import Statement, Value, keys_match, not_soft_deleted

VALID_FROM = "etl_craft_valid_from"
TIMING = "etl_craft_timing"
SAME_TIME = "SAME_TIME"  # differs from the key's live version, which starts at the same time
STALE = "STALE"  # no later than its key's history: left as the target has it
REOPENED = "REOPENED"  # a returning key earlier than its closing, restamped to the batch's time


def live(*, soft_deletes: bool) -> str:
    """A current version that isn't flagged deleted."""
    return (
        f"t.ACTIVE_FLAG = 'Y' AND {not_soft_deleted()}" if soft_deletes else "t.ACTIVE_FLAG = 'Y'"
    )


def bounds(target: str, *, soft_deletes: bool) -> Statement:
    """The latest start and end of the target's versions, its rows, and how many of its
    current versions are flagged deleted."""
    deleted = "0"
    if soft_deletes:
        deleted = (
            "COALESCE(SUM(CASE WHEN t.ACTIVE_FLAG = 'Y' AND t.DELETE_FLAG = 'Y' THEN 1 END), 0)"
        )
    return Statement(
        f"SELECT MAX(t.VALID_FROM), MAX(t.VALID_TO), COUNT(*), {deleted} FROM {target} t"
    )


def changed_keys(target: str, stage: str, keys: Sequence[str], *, soft_deletes: bool) -> Statement:
    """Staged keys whose live current version differs from the staged row."""
    return Statement(
        f"SELECT COUNT(*) FROM {stage} d WHERE EXISTS (\n"
        f"  SELECT 1 FROM {target} t WHERE {keys_match(keys)}\n"
        f"    AND {live(soft_deletes=soft_deletes)}\n"
        f"    AND t.HASH_KEY IS DISTINCT FROM d.etl_craft_hash\n"
        f")"
    )


def backwards(target: str, stage: str, keys: Sequence[str], *, soft_deletes: bool) -> Statement:
    """Staged keys that would open a version starting no later than one the key already has."""
    key_list = ", ".join(f"d.{key}" for key in keys)
    return Statement(
        f"SELECT {key_list}, d.{VALID_FROM}, COUNT(*) OVER () FROM {stage} d\n"
        f"WHERE NOT EXISTS (\n"
        f"  SELECT 1 FROM {target} t WHERE {keys_match(keys)}\n"
        f"    AND {live(soft_deletes=soft_deletes)} AND t.HASH_KEY = d.etl_craft_hash\n"
        f") AND EXISTS (\n"
        f"  SELECT 1 FROM {target} t WHERE {keys_match(keys)}\n"
        f"    AND (t.VALID_FROM >= d.{VALID_FROM} OR t.VALID_TO > d.{VALID_FROM})\n"
        f")\nORDER BY {key_list} LIMIT 5"
    )


def _version_of(target: str, keys: Sequence[str], condition: str) -> str:
    return f"EXISTS (SELECT 1 FROM {target} t WHERE {keys_match(keys)} AND {condition})"


def _not_later(target: str, keys: Sequence[str]) -> str:
    """The staged start is no later than a start or end the key's history already has."""
    return _version_of(
        target, keys, f"(t.VALID_FROM >= d.{VALID_FROM} OR t.VALID_TO > d.{VALID_FROM})"
    )


def settle_times(
    target: str, stage: str, keys: Sequence[str], batch: Value, *, soft_deletes: bool
) -> list[Statement]:
    """Mark each staged start that doesn't move its key forward; a returning key (versions, none
    live) first moves to the batch's time, and is stale only if that isn't later either."""
    current = live(soft_deletes=soft_deletes)
    differs = _version_of(
        target, keys, f"{current} AND t.HASH_KEY IS DISTINCT FROM d.etl_craft_hash"
    )
    same_time = _version_of(target, keys, f"{current} AND t.VALID_FROM = d.{VALID_FROM}")
    returning = f"NOT {_version_of(target, keys, current)} AND {_not_later(target, keys)}"
    return [
        Statement(f"ALTER TABLE {stage} ADD COLUMN {TIMING} VARCHAR(16)"),
        Statement(
            f"UPDATE {stage} AS d SET {TIMING} = CASE WHEN {same_time} THEN '{SAME_TIME}' "
            f"ELSE '{STALE}' END\nWHERE {differs} AND {_not_later(target, keys)}"
        ),
        Statement(
            f"UPDATE {stage} AS d SET {VALID_FROM} = {batch.sql}, {TIMING} = '{REOPENED}'\n"
            f"WHERE {returning}",
            [batch.param],
        ),
        Statement(
            f"UPDATE {stage} AS d SET {TIMING} = '{STALE}'\n"
            f"WHERE {TIMING} = '{REOPENED}' AND {_not_later(target, keys)}"
        ),
    ]


def settled(stage: str, keys: Sequence[str], own_time: str) -> Statement:
    """Per timing, five keys with their own time and their start, and how many keys it has."""
    key_list = ", ".join(keys)
    return Statement(
        f"SELECT {TIMING}, {key_list}, {own_time}, {VALID_FROM}, etl_craft_count FROM (\n"
        f"  SELECT {TIMING}, {key_list}, {own_time}, {VALID_FROM},\n"
        f"    COUNT(*) OVER (PARTITION BY {TIMING}) AS etl_craft_count,\n"
        f"    ROW_NUMBER() OVER (PARTITION BY {TIMING} ORDER BY {key_list}) AS etl_craft_rank\n"
        f"  FROM {stage} WHERE {TIMING} IS NOT NULL\n"
        f") s WHERE etl_craft_rank <= 5 ORDER BY {TIMING}, {key_list}"
    )


def applicable(stage: str) -> str:
    """The staged rows a merge writes: those whose start moves their key forward."""
    return f"(SELECT * FROM {stage} WHERE {TIMING} IS NULL OR {TIMING} = '{REOPENED}')"


def latest_start(stage: str) -> Statement:
    return Statement(f"SELECT MAX({VALID_FROM}) FROM {stage}")


def missing(stage: str, keys: Sequence[str], *, only_live: bool) -> str:
    """A current version (alias t) whose key the stage doesn't have."""
    current = live(soft_deletes=only_live)
    return f"{current} AND NOT EXISTS (SELECT 1 FROM {stage} d WHERE {keys_match(keys)})"


def started_before_batch(condition: str, stage: str) -> str:
    """Only the missing keys whose current version started before the batch's latest time."""
    return f"{condition} AND t.VALID_FROM < (SELECT MAX({VALID_FROM}) FROM {stage})"


def missing_not_after(
    target: str, condition: str, keys: Sequence[str], close_at: Value
) -> Statement:
    """Missing keys whose current version starts no earlier than ``close_at``."""
    key_list = ", ".join(f"t.{key}" for key in keys)
    return Statement(
        f"SELECT {key_list}, t.VALID_FROM, COUNT(*) OVER () FROM {target} t\n"
        f"WHERE {condition} AND t.VALID_FROM >= {close_at.sql}\nORDER BY {key_list} LIMIT 5",
        [close_at.param],
    )


def current_of(target: str, condition: str) -> str:
    """The versions matching ``condition`` as a source an insert reads (alias d)."""
    return f"(SELECT * FROM {target} t WHERE {condition})"
