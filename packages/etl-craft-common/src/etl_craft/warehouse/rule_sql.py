"""The warehouse SQL of business rules: which keys break a rule, which flagged keys still have
rows, and the table of REJECT keys a downstream task excludes.

Keys are compared as text (CAST ... AS VARCHAR): the same text the flags store, so a key read
from the Engine DB matches its row whatever the column's type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from etl_craft.warehouse.targets import TargetObject


@dataclass(frozen=True)
class Scope:
    """Which rows of the target are judged: current versions, and this run's rows unless forced."""

    target: TargetObject
    keys: tuple[str, ...]
    columns: frozenset[str]  # the target's column names, lower case
    pipeline_run_id: int | None  # None judges every current row

    def live(self, alias: str) -> list[str]:
        """Rows that exist: closed SCD2 versions and soft-deleted rows don't."""
        conditions = []
        if "active_flag" in self.columns:
            conditions.append(f"{alias}.ACTIVE_FLAG = 'Y'")
        if "delete_flag" in self.columns:
            conditions.append(f"COALESCE({alias}.DELETE_FLAG, 'N') <> 'Y'")
        return conditions

    def this_run(self, alias: str) -> str:
        if self.pipeline_run_id is None or "pipeline_run_id" not in self.columns:
            return "1 = 1"
        return f"{alias}.PIPELINE_RUN_ID = {int(self.pipeline_run_id)}"


def _where(conditions: Sequence[str]) -> str:
    return " AND ".join(conditions) or "1 = 1"


def broken_keys(select: str, scope: Scope) -> str:
    """The distinct judged keys the rule's SELECT returns, as text, and any NULL key."""
    texts = ", ".join(f"CAST(r.{key} AS VARCHAR)" for key in scope.keys)
    match = " AND ".join(f"t.{key} = r.{key}" for key in scope.keys)
    judged = _where([match, *scope.live("t"), scope.this_run("t")])
    nulls = " OR ".join(f"r.{key} IS NULL" for key in scope.keys)
    # NULL keys come back apart, to be refused rather than silently never matching a row; apart
    # because `IS NULL OR EXISTS` defeats the semi-join and turns the check quadratic.
    # The SELECT closes on its own line, so a trailing -- comment can't swallow the wrapper.
    return (
        f"WITH etl_rule AS (\n{select}\n)\n"
        f"SELECT DISTINCT {texts} FROM etl_rule r\n"
        f"WHERE EXISTS (SELECT 1 FROM {scope.target.sql} t WHERE {judged})\n"
        f"UNION\nSELECT {texts} FROM etl_rule r WHERE {nulls}"
    )


def present_keys(scope: Scope, count: int, placeholder: str) -> str:
    """Which of ``count`` keys (bound as text) have a live row, and whether one is this run's."""
    names = [f"key_{index}" for index in range(len(scope.keys))]
    first = ", ".join(f"CAST({placeholder} AS VARCHAR)" for _ in names)
    other = ", ".join(placeholder for _ in names)
    rows = ",\n".join([f"({first})", *[f"({other})"] * (count - 1)])
    match = " AND ".join(
        f"CAST(t.{key} AS VARCHAR) = v.{name}" for key, name in zip(scope.keys, names, strict=True)
    )
    selected = ", ".join(f"v.{name}" for name in names)
    return (
        f"SELECT {selected}, MAX(CASE WHEN {scope.this_run('t')} THEN 1 ELSE 0 END)\n"
        f"FROM (VALUES\n{rows}\n) AS v({', '.join(names)})\n"
        f"JOIN {scope.target.sql} t ON {match}\n"
        f"WHERE {_where(scope.live('t'))}\n"
        f"GROUP BY {selected}"
    )


def empty_rejects_table(table: str, target: TargetObject, keys: Sequence[str]) -> str:
    """A table with the target's key columns, typed as there, and no rows."""
    columns = ", ".join(f"t.{key}" for key in keys)
    return f"CREATE TABLE {table} AS SELECT {columns} FROM {target.sql} t WHERE 1 = 0"


def fill_rejects_table(
    table: str, target: TargetObject, keys: Sequence[str], count: int, placeholder: str
) -> str:
    """Copy into ``table`` the target's key columns of ``count`` keys, each bound as text."""
    columns = ", ".join(f"t.{key}" for key in keys)
    match = " AND ".join(f"CAST(t.{key} AS VARCHAR) = v.k{i}" for i, key in enumerate(keys))
    row = "(" + ", ".join(f"CAST({placeholder} AS VARCHAR)" for _ in keys) + ")"
    names = ", ".join(f"k{i}" for i in range(len(keys)))
    values = ",\n".join([row] * count)
    return (
        f"INSERT INTO {table} SELECT DISTINCT {columns} FROM {target.sql} t\n"
        f"JOIN (VALUES\n{values}\n) AS v({names}) ON {match}"
    )


def judge_current_versions(select: str, scope: Scope, dialect: str) -> str:
    """The rule's SELECT reading only live rows of the target wherever it names the target.

    A closed SCD2 version would otherwise break a rule on behalf of a key whose current
    version passes it.
    """
    live = scope.live(scope.target.table)
    if not live:
        return select
    tree = sqlglot.parse_one(select, read=dialect)
    for table in [node for node in tree.find_all(exp.Table) if _names(node, scope.target)]:
        alias = table.alias_or_name
        rows = f"SELECT * FROM {scope.target.sql} {scope.target.table} WHERE {_where(live)}"
        # A TableAlias node, not a bare name: Snowflake's generator reads the alias's columns.
        named = exp.TableAlias(this=exp.to_identifier(alias))
        table.replace(exp.Subquery(this=sqlglot.parse_one(rows, read=dialect), alias=named))
    return tree.sql(dialect=dialect)


def _names(table: exp.Table, target: TargetObject) -> bool:
    if table.name.lower() != target.table.lower() or table.db.lower() != target.schema.lower():
        return False
    return not table.catalog or table.catalog.lower() == (target.database or "").lower()
