"""SCD2 history statements over the target (alias t) and the deduplicated stage (alias d).

A version is valid from VALID_FROM (inclusive) to VALID_TO (exclusive, NULL while current);
the stage carries each key's start in etl_craft_valid_from.
"""

from __future__ import annotations

from collections.abc import Sequence

from etl_craft.warehouse.audit import TIMESTAMP
from etl_craft.warehouse.statements import Statement, Value, keys_match, not_soft_deleted

VALID_FROM = "etl_craft_valid_from"


def stamp_valid_from(stage: str, start: Value) -> list[Statement]:
    """Give every staged key the instant its new version would start."""
    params = [start.param] if start.bound else []
    return [
        Statement(f"ALTER TABLE {stage} ADD COLUMN {VALID_FROM} {TIMESTAMP}"),
        Statement(f"UPDATE {stage} SET {VALID_FROM} = {start.sql}", params),
    ]


def live(*, soft_deletes: bool) -> str:
    """A current version that isn't flagged deleted."""
    return (
        f"t.ACTIVE_FLAG = 'Y' AND {not_soft_deleted()}" if soft_deletes else "t.ACTIVE_FLAG = 'Y'"
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


def latest_start(stage: str) -> Statement:
    return Statement(f"SELECT MAX({VALID_FROM}) FROM {stage}")


def missing(stage: str, keys: Sequence[str], *, only_live: bool) -> str:
    """A current version (alias t) whose key the stage doesn't have."""
    current = live(soft_deletes=only_live)
    return f"{current} AND NOT EXISTS (SELECT 1 FROM {stage} d WHERE {keys_match(keys)})"


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
