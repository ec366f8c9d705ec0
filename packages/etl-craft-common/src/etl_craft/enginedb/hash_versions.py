"""AUD_TARGET_HASH_VERSION: which change-hash version a warehouse target's HASH_KEY values have.

A target is keyed by its warehouse and its name there:

- WAREHOUSE_NAME is ``<dialect>:<database>``, lowercase, where the database is the one holding
  the table (the connection's current database unless TARGET_OBJECT names another). It names
  the warehouse by what the tables live in, not by how etl-craft reaches it, so a renamed
  profile, another host name for the same server or a moved DuckDB file keeps its record.
  Two warehouses of one dialect with equally named databases share records when they share
  an Engine DB; give such databases distinct names.
- TARGET_OBJECT is ``<schema>.<table>``, lowercase: unquoted names are case-insensitive on
  every warehouse etl-craft writes, and ``db.s.t`` and ``s.t`` in the current database are
  the same table.

No recorded version means "unknown": it is treated as current and the target's first
successful write records it. A target known to hold another version is moved to the current
one by ``etl-craft rehash``.
"""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.core.actor import Actor
from etl_craft.enginedb.connection import EngineConnection


@dataclass(frozen=True)
class HashedTarget:
    warehouse_name: str
    target_object: str

    @classmethod
    def of(cls, dialect: str, database: str, schema: str, table: str) -> HashedTarget:
        return cls(f"{dialect}:{database}".lower(), f"{schema}.{table}".lower())

    def __str__(self) -> str:
        return f"{self.target_object} of {self.warehouse_name}"

    def params(self) -> dict[str, str]:
        return {"warehouse_name": self.warehouse_name, "target_object": self.target_object}


def recorded_version(conn: EngineConnection, target: HashedTarget) -> int | None:
    row = conn.one("read_target_hash_version", **target.params())
    return None if row is None else int(row["hash_version"])


def record_version(
    conn: EngineConnection, target: HashedTarget, version: int, actor: Actor, *, replace: bool
) -> None:
    """Record ``version``; without ``replace`` only when no version is recorded yet."""
    name = "record_target_hash_version" if replace else "record_first_target_hash_version"
    conn.run(name, hash_version=version, actor=actor.name, **target.params())


def forget_version(conn: EngineConnection, target: HashedTarget) -> None:
    conn.run("forget_target_hash_version", **target.params())
