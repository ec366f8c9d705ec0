"""Warehouse statements written once against the dialect interface.

Every identifier here was checked to be a plain identifier before it got here, so names are
embedded as written; values always travel as parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlglot import exp

from etl_craft.core.errors import WarehouseError
from etl_craft.warehouse.dialect import Column, Dialect, UpdateStrategy, Upsert


@dataclass
class Statement:
    sql: str
    params: list[object] = field(default_factory=list)


@dataclass(frozen=True)
class Value:
    """An expression for one column: SQL text, with a parameter when the value comes from Python."""

    sql: str
    param: object = None
    bound: bool = False


def bound(dialect: Dialect, value: object, sql_type: str) -> Value:
    # Cast, because a bare parameter in a SELECT list has no type to insert with.
    return Value(
        f"CAST({dialect.placeholder} AS {dialect.render_type(sql_type)})", value, bound=True
    )


def _render(values: Sequence[Value]) -> tuple[list[str], list[object]]:
    return [value.sql for value in values], [value.param for value in values if value.bound]


def keys_match(keys: Sequence[str], left: str = "t", right: str = "d") -> str:
    return " AND ".join(f"{left}.{key} = {right}.{key}" for key in keys)


def create_stage(stage: str, select_sql: str, *, empty: bool = False) -> Statement:
    # The SELECT closes on its own line, so a trailing -- comment can't swallow the wrapper.
    where = " WHERE 1 = 0" if empty else ""
    return Statement(
        f"CREATE TEMPORARY TABLE {stage} AS SELECT * FROM (\n{select_sql}\n) etl_src{where}"
    )


def fill_stage(stage: str, select_sql: str, computed: Sequence[str], joined: str = "") -> Statement:
    """The SELECT's rows into the empty stage, widened by the ``computed`` expressions, which
    may read what ``joined`` (a LEFT JOIN bringing at most one row each) adds to a row.

    No parameters: a driver would read a % in the SELECT's own text as a placeholder.
    """
    extra = "".join(f", {expression}" for expression in computed)
    return Statement(
        f"INSERT INTO {stage}\nSELECT etl_src.*{extra} FROM (\n{select_sql}\n) etl_src{joined}"
    )


def instant(dialect: Dialect, value: datetime) -> str:
    """A timestamp with time zone as a literal that sqlglot renders: for statements that embed
    the task's SELECT and so take no parameters."""
    text = exp.Literal.string(value.isoformat())
    return exp.cast(text, exp.DataType.build("TIMESTAMPTZ")).sql(dialect.sqlglot_name)


def key_copies(stage: str, keys: Sequence[str]) -> Statement:
    """The stage's distinct keys, its rows with a NULL key, and the most rows one key has."""
    key_list = ", ".join(keys)
    nulls = " OR ".join(f"{key} IS NULL" for key in keys)
    return Statement(
        f"SELECT COUNT(*), COALESCE(SUM(CASE WHEN {nulls} THEN etl_craft_copies ELSE 0 END), 0),\n"
        f"  COALESCE(MAX(etl_craft_copies), 0)\n"
        f"FROM (SELECT {key_list}, COUNT(*) AS etl_craft_copies FROM {stage} GROUP BY {key_list}) k"
    )


def drop_table(table: str) -> Statement:
    return Statement(f"DROP TABLE IF EXISTS {table}")


def count_rows(table: str, where: str = "") -> Statement:
    return Statement(f"SELECT COUNT(*) FROM {table}{f' WHERE {where}' if where else ''}")


def first_rows(dialect: Dialect, table: str, limit: int) -> Statement:
    return Statement(f"SELECT * FROM {table} LIMIT {dialect.placeholder}", [limit])


def duplicate_keys(stage: str, keys: Sequence[str]) -> Statement:
    """Keys with more than one row: five of them, each with the count of such keys and the rows
    beyond one per key (what a merge's dedupe drops)."""
    key_list = ", ".join(keys)
    return Statement(
        f"SELECT {key_list}, COUNT(*) OVER (), SUM(COUNT(*) - 1) OVER ()\n"
        f"FROM {stage} GROUP BY {key_list} HAVING COUNT(*) > 1 ORDER BY {key_list} LIMIT 5"
    )


def null_keys(stage: str, keys: Sequence[str]) -> Statement:
    return count_rows(stage, " OR ".join(f"{key} IS NULL" for key in keys))


def dedupe_ties(stage: str, keys: Sequence[str], order: str, row_hash: str) -> Statement:
    """Keys whose first rows under the order differ: their count, and five of them."""
    key_list = ", ".join(keys)
    order_by = f" ORDER BY {order}" if order else ""
    return Statement(
        f"WITH ranked AS (\n"
        f"  SELECT {key_list}, {row_hash} AS etl_craft_row_hash,\n"
        f"    RANK() OVER (PARTITION BY {key_list}{order_by}) AS etl_craft_rank\n"
        f"  FROM {stage} s\n"
        f"), ties AS (\n"
        f"  SELECT {key_list} FROM ranked WHERE etl_craft_rank = 1\n"
        f"  GROUP BY {key_list} HAVING COUNT(DISTINCT etl_craft_row_hash) > 1\n"
        f")\n"
        f"SELECT {key_list}, COUNT(*) OVER () FROM ties ORDER BY {key_list} LIMIT 5"
    )


def dedupe(
    stage: str, target: str, keys: Sequence[str], order: str, columns: Sequence[str]
) -> Statement:
    """One row per key: the first under the order."""
    key_list = ", ".join(keys)
    order_by = f" ORDER BY {order}" if order else ""
    return Statement(
        f"CREATE TEMPORARY TABLE {target} AS\n"
        f"SELECT {', '.join(columns)} FROM (\n"
        f"  SELECT s.*, ROW_NUMBER() OVER (PARTITION BY {key_list}{order_by}) AS etl_craft_rank\n"
        f"  FROM {stage} s\n"
        f") d WHERE etl_craft_rank = 1"
    )


def differing(
    changes: str, delta: str, target: str, keys: Sequence[str], conditions: Sequence[str]
) -> Statement:
    """The staged rows (alias d) that no target row meeting ``conditions`` matches by key and
    hash: the only rows a merge's update and insert can write."""
    also = "".join(f" AND {condition}" for condition in conditions)
    return Statement(
        f"CREATE TEMPORARY TABLE {delta} AS\nSELECT * FROM {changes} d WHERE NOT EXISTS (\n"
        f"  SELECT 1 FROM {target} t WHERE {keys_match(keys)}\n"
        f"    AND t.HASH_KEY = d.etl_craft_hash{also}\n)"
    )


def kept_where(changes: str, delta: str, condition: str) -> Statement:
    """The staged rows (alias d) meeting ``condition``."""
    return Statement(
        f"CREATE TEMPORARY TABLE {delta} AS\nSELECT * FROM {changes} d WHERE {condition}"
    )


def index_stage(stage: str, keys: Sequence[str], *, index: bool = True) -> list[Statement]:
    analyze = Statement(f"ANALYZE {stage}")
    if not index:
        return [analyze]
    return [Statement(f"CREATE INDEX {stage}_keys ON {stage} ({', '.join(keys)})"), analyze]


def create_schema(schema: str) -> Statement:
    return Statement(f"CREATE SCHEMA IF NOT EXISTS {schema}")


def create_table(target: str, columns: Sequence[Column]) -> Statement:
    definitions = ",\n".join(f"  {column.name} {column.type}" for column in columns)
    return Statement(f"CREATE TABLE {target} (\n{definitions}\n)")


def identity(type_text: str) -> str:
    """A column of ``type_text`` the warehouse numbers 1, 2, ... in the order rows arrive."""
    return f"{type_text} IDENTITY(1, 1) ORDER"


def add_column(target: str, column: Column) -> Statement:
    return Statement(f"ALTER TABLE {target} ADD COLUMN {column.name} {column.type}")


def insert_from(target: str, source: str, values: dict[str, Value], where: str = "") -> Statement:
    names, params = list(values), _render(list(values.values()))[1]
    expressions = _render(list(values.values()))[0]
    return Statement(
        f"INSERT INTO {target} ({', '.join(names)})\n"
        f"SELECT {', '.join(expressions)}\nFROM {source} d{f' WHERE {where}' if where else ''}",
        params,
    )


def row_id_value(target: str) -> Value:
    """The next ROW_IDs: only correct under the target's mutation lock."""
    return Value(f"(SELECT COALESCE(MAX(ROW_ID), 0) FROM {target}) + ROW_NUMBER() OVER ()")


_UPDATES_FROM = (UpdateStrategy.UPDATE_FROM, UpdateStrategy.REWRITE)


def update_from(
    dialect: Dialect,
    target: str,
    source: str,
    keys: Sequence[str],
    assignments: dict[str, Value],
    condition: str,
) -> Statement:
    """The target's rows matching a source row (one per key) and ``condition``, updated."""
    expressions, params = _render(list(assignments.values()))
    sets = ", ".join(f"{name} = {sql}" for name, sql in zip(assignments, expressions, strict=True))
    strategy = dialect.capabilities.update_strategy
    if strategy is UpdateStrategy.MERGE:
        return Statement(
            f"MERGE INTO {target} AS t USING {source} AS d\nON {keys_match(keys)}\n"
            f"WHEN MATCHED AND ({condition}) THEN UPDATE SET {sets}",
            params,
        )
    # REWRITE takes the same UPDATE ... FROM and runs it as a new state (warehouse.rewrite).
    if strategy not in _UPDATES_FROM:
        raise WarehouseError(
            f"the {dialect.name} warehouse updates through {strategy}, which etl-craft doesn't "
            "render as a statement: its actions compute the target's new state instead"
        )
    return Statement(
        f"UPDATE {target} AS t SET {sets}\nFROM {source} AS d\n"
        f"WHERE {keys_match(keys)} AND ({condition})",
        params,
    )


def fence_upsert(
    dialect: Dialect, table: str, values: Sequence[Value], task_run_id: int
) -> list[Statement]:
    """Claim a task run's fence row for an attempt, unless a later attempt holds it.

    ``values`` are the task run's id, the attempt's id and the time. INSERT ... ON CONFLICT
    returns the claimed id, and no row when refused; INSERT_THEN_UPDATE's statements each
    count one row when they claim it, and the second runs only when the first claimed none; the
    other forms return nothing, so the caller reads the row back in the same transaction.
    """
    names = "task_run_id, attempt_id, fenced_at"
    listed, params = _render(values)
    upsert = dialect.capabilities.upsert
    if upsert is Upsert.MERGE:
        aliased = ", ".join(
            f"{sql} AS {name}" for sql, name in zip(listed, names.split(", "), strict=True)
        )
        # MERGE locks the table to commit, and a waiting MERGE then reads the committed row.
        return [
            Statement(
                f"MERGE INTO {table} AS f USING (SELECT {aliased}) AS e\n"
                "ON f.task_run_id = e.task_run_id\n"
                "WHEN MATCHED AND f.attempt_id <= e.attempt_id THEN UPDATE\n"
                "SET attempt_id = e.attempt_id, fenced_at = e.fenced_at\n"
                f"WHEN NOT MATCHED THEN INSERT ({names})\n"
                "VALUES (e.task_run_id, e.attempt_id, e.fenced_at)",
                params,
            )
        ]
    if upsert in (Upsert.INSERT_THEN_UPDATE, Upsert.UPDATE_THEN_INSERT):
        mark = dialect.placeholder
        _, attempt, stamp = listed
        _, attempt_id, fenced_at = params
        insert = Statement(
            f"INSERT INTO {table} ({names})\nSELECT {', '.join(listed)}\n"
            f"WHERE NOT EXISTS (SELECT 1 FROM {table} WHERE task_run_id = {mark})",
            [*params, task_run_id],
        )
        update = Statement(
            f"UPDATE {table} SET attempt_id = {attempt}, fenced_at = {stamp}\n"
            f"WHERE task_run_id = {mark} AND attempt_id <= {attempt}",
            [attempt_id, fenced_at, task_run_id, attempt_id],
        )
        return [insert, update] if upsert is Upsert.INSERT_THEN_UPDATE else [update, insert]
    # The conflicting row is locked even where the WHERE refuses the update, so a later writer
    # waits for this transaction and then reads the id it leaves.
    return [
        Statement(
            f"INSERT INTO {table} AS f ({names})\n"
            f"VALUES ({', '.join(listed)})\n"
            "ON CONFLICT (task_run_id) DO UPDATE\n"
            "SET attempt_id = EXCLUDED.attempt_id, fenced_at = EXCLUDED.fenced_at\n"
            "WHERE f.attempt_id <= EXCLUDED.attempt_id\n"
            "RETURNING attempt_id",
            params,
        )
    ]


def update_where(target: str, assignments: dict[str, Value], condition: str) -> Statement:
    expressions, params = _render(list(assignments.values()))
    sets = ", ".join(f"{name} = {sql}" for name, sql in zip(assignments, expressions, strict=True))
    return Statement(f"UPDATE {target} AS t SET {sets}\nWHERE {condition}", params)


def matching(source: str, keys: Sequence[str]) -> str:
    return f"EXISTS (SELECT 1 FROM {source} d WHERE {keys_match(keys)})"


def delete_where(
    dialect: Dialect, target: str, condition: str = "", params: Sequence[object] = ()
) -> Statement:
    where = f" WHERE {condition}" if condition else ""
    return Statement(f"DELETE FROM {target} AS t{where}", list(params))


def param(dialect: Dialect) -> str:
    return dialect.placeholder


# Conditions and values over the target (alias t) and the stage (alias d), named for what
# they mean so the actions read as their rules.


def stage_value(column: str) -> Value:
    return Value(f"d.{column}")


def staged_hash() -> Value:
    return Value("d.etl_craft_hash")


def flag(value: bool) -> Value:
    return Value("'Y'" if value else "'N'")


def hash_changed(*, soft_deletes: bool) -> str:
    """The staged row differs from the stored one, or the stored one was soft-deleted."""
    changed = "t.HASH_KEY IS DISTINCT FROM d.etl_craft_hash"
    return f"{changed} OR t.DELETE_FLAG = 'Y'" if soft_deletes else changed


def hash_key_differs(expression: str) -> str:
    """A row whose stored HASH_KEY is not what ``expression`` computes now."""
    return f"t.HASH_KEY IS DISTINCT FROM {expression}"


def count_hash_changes(table: str, expression: str) -> Statement:
    """The rows of ``table`` and how many of them ``expression`` would give a new HASH_KEY."""
    differs = hash_key_differs(expression)
    return Statement(
        f"SELECT COUNT(*), COALESCE(SUM(CASE WHEN {differs} THEN 1 ELSE 0 END), 0) FROM {table} t"
    )


def rewrite_hash_keys(table: str, expression: str) -> Statement:
    return update_where(table, {"HASH_KEY": Value(expression)}, hash_key_differs(expression))


def current_version(condition: str = "") -> str:
    return f"t.ACTIVE_FLAG = 'Y' AND ({condition})" if condition else "t.ACTIVE_FLAG = 'Y'"


def not_soft_deleted() -> str:
    return "(t.DELETE_FLAG IS NULL OR t.DELETE_FLAG <> 'Y')"


def absent_from(target: str, keys: Sequence[str], *, current_only: bool) -> str:
    """No row (or no current version) of the staged key in the target yet."""
    version = f" AND {current_version()}" if current_only else ""
    return f"NOT EXISTS (SELECT 1 FROM {target} t WHERE {keys_match(keys)}{version})"


def of_task_run(dialect: Dialect) -> str:
    return f"t.TASK_RUN_ID = {dialect.placeholder}"
