"""Slices of a shared target: several pipelines each write, and read back, only their own rows.

A task declares its slice with SLICE_COLUMN and SLICE_VALUE (and SLICE_TABLE when the table is
not its TARGET_OBJECT): it writes only the rows whose column holds the value, and its reads of
the table stay within them. The value may be a token of its pipeline (`$$param.CLIENT`,
`$$pipeline_code`), so one template gives each instance its own slice. Two tasks whose slices
of a table differ touch disjoint rows, so neither needs to wait for the other, provided the
reader's SQL keeps to its slice: every read of the table requires `column = value` (in its
WHERE or its join's ON, not under an OR), with the pipeline's own values in the tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from etl_craft.config.project import Project
from etl_craft.core.enums import Handler
from etl_craft.enginedb.metadata import ProjectMetadata, TaskRow
from etl_craft.lineage.sources import name_key, task_placeholders, task_sql
from etl_craft.lineage.trace import table_key
from etl_craft.warehouse.literals import (
    ParameterKind,
    parameter_kind,
    read_value,
    sql_literal,
    value_problem,
)
from etl_craft.warehouse.substitution import PARAMETER_PREFIX, substitute


@dataclass(frozen=True)
class Slice:
    table: str  # the table key
    column: str  # lower case: slices compare column names as the warehouse folds them
    value: str | None  # with its pipeline's tokens replaced

    def same_rows(self, other: Slice) -> bool:
        return self.column == other.column and self.value == other.value

    def describe(self) -> str:
        return f"{self.column} = {self.value!r} of {self.table}"


class Slices:
    """The slice each task declares, and whether its SQL keeps to it."""

    def __init__(self, metadata: ProjectMetadata, project: Project | None, dialect: str) -> None:
        self._metadata, self._project, self._dialect = metadata, project, dialect
        self._tasks = {task.task_id: task for task in metadata.tasks}
        self.of = cache(self._of)
        self.kept = cache(self._kept)

    def apart(self, reader: int, writer: int, table: str) -> bool:
        """Whether the reader touches only rows of ``table`` the writer never writes."""
        mine, theirs = self.of(reader, table), self.of(writer, table)
        if mine is None or theirs is None or mine.column != theirs.column:
            return False
        return not mine.same_rows(theirs) and self.kept(reader, table)

    def _of(self, task_id: int, table: str) -> Slice | None:
        task = self._tasks[task_id]
        column, value = task.parameter("SLICE_COLUMN"), task.parameter("SLICE_VALUE")
        named = task.parameter("SLICE_TABLE") or task.parameter("TARGET_OBJECT")
        if column is None or name_key(named, self._dialect) != table:
            return None
        resolved = None if value is None else substitute(value, self._raw_values(task))
        return Slice(table, column.strip().lower(), resolved)

    def _kept(self, task_id: int, table: str) -> bool:
        own = self.of(task_id, table)
        if own is None or own.value is None:
            return False
        texts = list(self._sql_texts(self._tasks[task_id]))
        return all(_confined(text, own, self._dialect) for text in texts)

    def _sql_texts(self, task: TaskRow) -> Iterator[str]:
        """The SQL the task reads with, its pipeline's values in the tokens; none for a script."""
        values = self._run_values(task)
        if task.handler is Handler.SQL:
            sql = task_sql(task, self._project, self._metadata, self._dialect, values).sql
            yield sql or ""
        for rule in self._metadata.business_rules:
            if rule.task_id == task.task_id:
                yield substitute(rule.rule_sql, values)

    def _raw_values(self, task: TaskRow) -> dict[str, str]:
        pipeline = self._metadata.pipeline_by_id(task.pipeline_id)
        return {"pipeline_code": pipeline.code} | {
            PARAMETER_PREFIX + p.name: p.value or ""
            for p in self._metadata.pipeline_parameters
            if p.pipeline_id == task.pipeline_id
        }

    def _run_values(self, task: TaskRow) -> dict[str, str]:
        values = task_placeholders(self._metadata, task, self._dialect)
        code = self._metadata.pipeline_by_id(task.pipeline_id).code
        values["pipeline_code"] = sql_literal(ParameterKind.STRING, code, self._dialect)
        for p in self._metadata.pipeline_parameters:
            kind = parameter_kind(p.type)
            if p.pipeline_id == task.pipeline_id and value_problem(kind, p.value) is None:
                literal = sql_literal(kind, read_value(kind, p.value), self._dialect)
                values[PARAMETER_PREFIX + p.name] = literal
        return values


def _confined(sql: str, own: Slice, dialect: str) -> bool:
    """Whether every read of the slice's table in ``sql`` requires its column to hold its value."""
    try:
        query = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return False
    reads = [t for t in query.find_all(exp.Table) if table_key(t, dialect) == own.table]
    return all(_pinned(table, own) for table in reads)


def _pinned(table: exp.Table, own: Slice) -> bool:
    select = table.find_ancestor(exp.Select)
    if select is None:
        return False
    where = select.args.get("where")
    conditions = [where.this if where is not None else None]
    conditions += [join.args.get("on") for join in select.args.get("joins") or ()]
    alias = table.alias_or_name
    return any(
        _requires(part, alias, own)
        for condition in conditions
        if condition is not None
        for part in _conjuncts(condition)
    )


def _conjuncts(condition: exp.Expr) -> Iterator[exp.Expr]:
    while isinstance(condition, exp.Paren):
        condition = condition.this
    if isinstance(condition, exp.And):
        yield from _conjuncts(condition.left)
        yield from _conjuncts(condition.right)
    else:
        yield condition


def _requires(condition: exp.Expr, alias: str, own: Slice) -> bool:
    if not isinstance(condition, exp.EQ):
        return False
    for column, value in ((condition.left, condition.right), (condition.right, condition.left)):
        if (
            isinstance(column, exp.Column)
            and column.name.lower() == own.column
            and column.table in (alias, "")
            and isinstance(value, exp.Literal)
            and str(value.this) == own.value
        ):
            return True
    return False
