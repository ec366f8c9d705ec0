"""The SQL of a metadata edit, in the style of a hand-written project migration.

Rows are found by their codes (never by an id, which differs between Engine DBs), so the file
applies to every Engine DB of the project. Every value is a quoted literal: a quote, a
semicolon or a comment marker in it stays data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from etl_craft.core.enums import EditKind
from etl_craft.core.errors import UsageError
from etl_craft.operations.metadata.edit_kinds import FieldValue, KindSpec, spec_of


def sql_literal(value: FieldValue) -> str:
    """``value`` as an SQL literal that SQLite and PostgreSQL read back unchanged."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        raise UsageError(f"value {value!r} is a boolean; expected text, a whole number or NULL")
    if isinstance(value, int):
        return str(value)
    if "\x00" in value:
        raise UsageError(
            f"value {value[:40]!r}... holds a NUL character, which neither Engine DB stores "
            "in text; remove it"
        )
    return "'" + value.replace("'", "''") + "'"


@dataclass(frozen=True)
class Source:
    """The FROM, JOINs and WHERE that find one object's row (or its parent's) by codes."""

    tables: tuple[str, ...]
    conditions: tuple[str, ...]

    def joined(self, table: str, condition: str, *more: str) -> Source:
        return Source((*self.tables, f"{table} ON {condition}"), (*self.conditions, *more))

    def render(self) -> str:
        first, *joins = self.tables
        lines = [f"  FROM {first}", *(f"  JOIN {join}" for join in joins)]
        head, *rest = self.conditions
        lines.append(f" WHERE {head}")
        lines.extend(f"   AND {condition}" for condition in rest)
        return "\n".join(lines)


def _project(project_code: str, key: dict[str, str] | None = None) -> Source:
    return Source(
        ("CFG_PROJECTS j",),
        (f"j.PROJECT_CODE = {sql_literal(project_code)}", "j.ACTIVE_FLAG = 'Y'"),
    )


def _pipeline(project_code: str, key: dict[str, str], code: str = "pipeline") -> Source:
    alias = "p" if code == "pipeline" else "up"
    return _project(project_code).joined(
        f"CFG_PIPELINES {alias}",
        f"{alias}.PROJECT_ID = j.PROJECT_ID",
        f"{alias}.PIPELINE_CODE = {sql_literal(key[code])}",
        f"{alias}.ACTIVE_FLAG = 'Y'",
    )


def _task(project_code: str, key: dict[str, str]) -> Source:
    return _pipeline(project_code, key).joined(
        "CFG_TASKS t",
        "t.PIPELINE_ID = p.PIPELINE_ID",
        f"t.TASK_CODE = {sql_literal(key['task'])}",
        "t.ACTIVE_FLAG = 'Y'",
    )


def _upstream_task(project_code: str, key: dict[str, str]) -> Source:
    base = _task(project_code, key)
    upstream = _pipeline(project_code, key, "upstream_pipeline")
    return Source(
        (*base.tables, upstream.tables[1]),
        (*base.conditions, *upstream.conditions[2:]),
    ).joined(
        "CFG_TASKS u",
        "u.PIPELINE_ID = up.PIPELINE_ID",
        f"u.TASK_CODE = {sql_literal(key['upstream_task'])}",
        "u.ACTIVE_FLAG = 'Y'",
    )


def _upstream_pipeline(project_code: str, key: dict[str, str]) -> Source:
    base = _pipeline(project_code, key)
    upstream = _pipeline(project_code, key, "upstream_pipeline")
    return Source((*base.tables, upstream.tables[1]), (*base.conditions, *upstream.conditions[2:]))


def parent_source(spec: KindSpec, project_code: str, key: dict[str, str]) -> Source:
    """Where the parent ids of a new row come from (see KindSpec.parents)."""
    builders: dict[EditKind, Callable[[str, dict[str, str]], Source]] = {
        EditKind.PIPELINE: _project,
        EditKind.PIPELINE_PARAMETER: _pipeline,
        EditKind.PIPELINE_DEPENDENCY: _upstream_pipeline,
        EditKind.TASK: _pipeline,
        EditKind.TASK_PARAMETER: _task,
        EditKind.TASK_DEPENDENCY: _upstream_task,
        EditKind.BUSINESS_RULE: _task,
    }
    return builders[spec.kind](project_code, key)


def row_source(spec: KindSpec, project_code: str, key: dict[str, str]) -> Source:
    """Where the edited row itself is: its parent's source joined to the row by its codes."""
    if spec.kind is EditKind.PIPELINE:
        return _pipeline(project_code, key)
    parents = parent_source(spec, project_code, key)
    pairs = zip(spec.parents, spec.parent_ids, strict=True)
    on = " AND ".join(f"x.{column} = {expression}" for column, expression in pairs)
    coded = [f"x.{column} = {sql_literal(key[name])}" for name, column in spec.codes]
    flag = ["x.ACTIVE_FLAG = 'Y'"] if spec.has_active_flag else []
    return parents.joined(f"{spec.table} x", on, *coded, *flag)


def _alias(spec: KindSpec) -> str:
    return "p" if spec.kind is EditKind.PIPELINE else "x"


def insert_sql(spec: KindSpec, project_code: str, key: dict[str, str], fields: FieldMap) -> str:
    columns = [*spec.parents, *(column for _, column in spec.codes), *fields]
    values = [
        *spec.parent_ids,
        *(sql_literal(key[name]) for name, _ in spec.codes),
        *(sql_literal(value) for value in fields.values()),
    ]
    return (
        f"INSERT INTO {spec.table} ({', '.join(columns)})\n"
        f"SELECT {', '.join(values)}\n"
        f"{parent_source(spec, project_code, key).render()};\n"
    )


def update_sql(spec: KindSpec, project_code: str, key: dict[str, str], fields: FieldMap) -> str:
    assignments = ",\n       ".join(f"{column} = {sql_literal(v)}" for column, v in fields.items())
    return f"UPDATE {spec.table}\n   SET {assignments}\n{_rows(spec, project_code, key)}"


def delete_sql(spec: KindSpec, project_code: str, key: dict[str, str]) -> str:
    return f"DELETE FROM {spec.table}\n{_rows(spec, project_code, key)}"


def _rows(spec: KindSpec, project_code: str, key: dict[str, str]) -> str:
    """The WHERE that limits an UPDATE or DELETE to the edited row."""
    found = row_source(spec, project_code, key).render().replace("\n", "\n" + " " * 7)
    return (
        f" WHERE {spec.id_column} IN (\n       SELECT {_alias(spec)}.{spec.id_column}\n"
        f"       {found});\n"
    )


FieldMap = dict[str, FieldValue]

__all__ = [
    "FieldMap",
    "Source",
    "delete_sql",
    "insert_sql",
    "parent_source",
    "row_source",
    "spec_of",
    "sql_literal",
    "update_sql",
]
