"""AUD_BUSINESS_RULE_FLAGS: open, still-standing and cleared flags, in the caller's transaction.

Keys travel 1,000 to a statement: with the rule and task run ids that is 1,002 parameters, within
SQLite's limit (32,766 by default since SQLite 3.32) and PostgreSQL's 65,535, however many keys a
rule flags or clears.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from itertools import islice

from sqlalchemy import bindparam

from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.named_statements import statement

CHUNK = 1000


class ClearReason(StrEnum):
    PASSED = "PASSED"
    KEY_DELETED = "KEY_DELETED"


_CLEAR_STATEMENTS = {
    ClearReason.PASSED: "clear_passed_rule_flags",
    ClearReason.KEY_DELETED: "clear_deleted_rule_flags",
}


@dataclass(frozen=True)
class RuleRow:
    business_rule_id: int
    rule_code: str
    rule_type: str
    target_table: str
    key_columns: str
    rule_sql: str
    wave: int


def active_rules(conn: EngineConnection, task_id: int) -> list[RuleRow]:
    return [
        RuleRow(
            business_rule_id=int(row["business_rule_id"]),
            rule_code=str(row["rule_code"]),
            rule_type=str(row["rule_type"]),
            target_table=str(row["target_table"]),
            key_columns=str(row["key_columns"]),
            rule_sql=str(row["rule_sql"]),
            wave=int(row["wave"]),
        )
        for row in conn.all("active_business_rules", task_id=task_id)
    ]


def standing_keys(conn: EngineConnection, rule_id: int) -> set[str]:
    return {str(row["key_value"]) for row in conn.all("standing_rule_flags", rule_id=rule_id)}


def standing_reject_keys(conn: EngineConnection, target_table: str) -> list[str]:
    rows = conn.all("standing_reject_keys", target_table=target_table)
    return [str(row["key_value"]) for row in rows]


def open_flags(conn: EngineConnection, rule: RuleRow, keys: Iterable[str], task_run_id: int) -> int:
    rows = [
        {
            "rule_id": rule.business_rule_id,
            "rule_type": rule.rule_type,
            "target_table": rule.target_table,
            "key_value": key,
            "task_run_id": task_run_id,
        }
        for key in keys
    ]
    if rows:
        # One single-row statement with many parameter sets: each execution binds 5 values.
        conn.connection.execute(statement(conn.dialect, "open_rule_flag").clause, rows)
    return len(rows)


def see_flags(conn: EngineConnection, rule_id: int, keys: Iterable[str], task_run_id: int) -> int:
    return _per_chunk(conn, "see_rule_flags", rule_id, keys, task_run_id)


def clear_flags(
    conn: EngineConnection,
    rule_id: int,
    keys: Iterable[str],
    task_run_id: int,
    reason: ClearReason,
) -> int:
    return _per_chunk(conn, _CLEAR_STATEMENTS[reason], rule_id, keys, task_run_id)


def _per_chunk(
    conn: EngineConnection, name: str, rule_id: int, keys: Iterable[str], task_run_id: int
) -> int:
    clause = statement(conn.dialect, name).clause.bindparams(bindparam("keys", expanding=True))
    changed = 0
    for chunk in chunks(sorted(keys), CHUNK):
        result = conn.connection.execute(
            clause, {"rule_id": rule_id, "task_run_id": task_run_id, "keys": chunk}
        )
        changed += result.rowcount
    return changed


def chunks(items: Iterable[str], size: int) -> Iterator[list[str]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk
