"""What a merge target's HASH_KEY values are proven to be, kept beside the attempt ledger.

A merge finds a key's changed row by comparing the staged row's change hash with the stored
HASH_KEY. Where the stored values are known to be exactly the change hash of the row's own
compare columns, comparing those columns tells the same, and only the rows that differ need
their hash computed. That knowledge is a record per target, written in the same transaction as
the rows it describes and under the target's mutation lock, so no reader ever sees a record
that its table's committed rows contradict:

- PROVEN: every row in the contract's scope (the current versions of an SCD2 history, every row
  otherwise) has a non-NULL key, no key has two such rows, and each row's HASH_KEY is the
  change hash (of the contract's version) of its own values of the contract's columns, typed
  as the contract says.
- STALE: a merge with this contract checked and found a row for which that doesn't hold;
  merges with it hash every staged row and don't check again until the record is cleared
  (etl-craft rehash, or any write that doesn't keep the proof).

No record proves nothing. Every etl-craft write that could break the proof clears it in its
own transaction (CREATE_TABLE, OVERWRITE_TABLE, APPEND_TABLE, SETUP_TABLE creating the table,
DROP_TABLE, a merge with another contract or with stage types other than the target's,
etl-craft rehash). Writes made outside etl-craft are not seen: a table whose values were
changed without their HASH_KEY needs etl-craft rehash, as it always has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import Column
from etl_craft.warehouse.statements import Statement, bound
from etl_craft.warehouse.targets import TargetObject

RECORD_TABLE = "target_hash_record"
RECORD_COLUMNS = (
    Column("target_object", "VARCHAR(400) PRIMARY KEY"),
    Column("hash_contract", "VARCHAR NOT NULL"),
    Column("proof", "VARCHAR(8) NOT NULL"),
    Column("attempt_id", "BIGINT"),
    Column("recorded_at", "TIMESTAMP WITH TIME ZONE NOT NULL"),
)


class Proof(StrEnum):
    PROVEN = "PROVEN"
    STALE = "STALE"


@dataclass(frozen=True)
class Contract:
    """What a merge's change hash is computed over: one text, compared whole."""

    version: int
    current_only: bool  # the scope: an SCD2 history's current versions, or every row
    keys: tuple[str, ...]
    columns: tuple[Column, ...]  # in hash order, typed as the target stores them

    @property
    def text(self) -> str:
        scope = "current" if self.current_only else "all"
        keys = ",".join(key.lower() for key in self.keys)
        # Types may hold commas (DECIMAL(12,2)), never semicolons.
        columns = "".join(f";{column.key} {normal_type(column.type)}" for column in self.columns)
        return f"v{self.version};{scope};key {keys}{columns}"


def normal_type(type_text: str) -> str:
    return " ".join(type_text.lower().split())


def record_table(schema: str) -> TargetObject:
    return TargetObject(schema, RECORD_TABLE)


def record_key(conn: WarehouseConnection, target: TargetObject) -> str:
    """The target by its database, schema and table, however TARGET_OBJECT spells it."""
    resolved = conn.resolve(target)
    return f"{resolved.database}.{resolved.schema}.{resolved.table}".lower()


def read(conn: WarehouseConnection, schema: str, key: str) -> tuple[str, Proof] | None:
    """(contract text, proof) recorded for the target; None when nothing is."""
    sql = (
        f"SELECT hash_contract, proof FROM {record_table(schema).sql} "
        f"WHERE target_object = {conn.dialect.placeholder}"
    )
    rows = conn.fetch_all(f"read the hash record of {key}", sql, [key])
    return (str(rows[0][0]), Proof(str(rows[0][1]))) if rows else None


def write(
    conn: WarehouseConnection,
    schema: str,
    key: str,
    contract: Contract,
    proof: Proof,
    attempt_id: int | None,
    at: datetime,
) -> None:
    """Replace the target's record, inside the caller's transaction."""
    forget(conn, schema, key)
    dialect = conn.dialect
    values = [
        bound(dialect, key, "VARCHAR"),
        bound(dialect, contract.text, "VARCHAR"),
        bound(dialect, proof.value, "VARCHAR"),
        bound(dialect, attempt_id, "BIGINT"),
        bound(dialect, at, "TIMESTAMP WITH TIME ZONE"),
    ]
    names = ", ".join(column.name for column in RECORD_COLUMNS)
    sql = (
        f"INSERT INTO {record_table(schema).sql} ({names})\n"
        f"VALUES ({', '.join(value.sql for value in values)})"
    )
    conn.execute(f"record {proof} hashes of {key}", sql, [value.param for value in values])


def forget(conn: WarehouseConnection, schema: str, key: str) -> None:
    """Clear the target's record, inside the caller's transaction."""
    sql = f"DELETE FROM {record_table(schema).sql} WHERE target_object = {conn.dialect.placeholder}"
    conn.execute(f"clear the hash record of {key}", sql, [key])


def check(
    target: str,
    contract: Contract,
    hash_expression: str,
    scope: Sequence[str],
    staged: tuple[str, str],
) -> Statement:
    """In the contract's scope: the keys with more than one row, and the rows whose HASH_KEY
    is not ``hash_expression`` over their own values (alias t).

    ``staged`` is a table with one row per key (alias d) and its rows' change hashes in
    etl_craft_hash, and a condition that t and d have the same compared values: a stored row
    with its staged row's values and hash needs no hash of its own computed.
    """
    stage, same = staged
    keys = ", ".join(f"t.{key}" for key in contract.keys)
    where = " AND ".join([*scope, *(f"t.{key} IS NOT NULL" for key in contract.keys)])
    on = " AND ".join(f"t.{key} = d.{key}" for key in contract.keys)
    # Two scans rather than one grouped one: the hash comparison needs no grouping.
    return Statement(
        f"SELECT (SELECT COUNT(*) FROM (SELECT {keys} FROM {target} t WHERE {where}\n"
        f"    GROUP BY {keys} HAVING COUNT(*) > 1) r),\n"
        "  (SELECT COALESCE(SUM(CASE\n"
        f"    WHEN t.HASH_KEY = d.etl_craft_hash AND {same} THEN 0\n"
        f"    WHEN t.HASH_KEY IS DISTINCT FROM {hash_expression} THEN 1 ELSE 0 END), 0)\n"
        f"  FROM {target} t LEFT JOIN {stage} d ON {on} WHERE {where})"
    )
