"""Each task's part in lineage, read from its parameters: the SELECT, the target, the reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sqlglot.errors import SqlglotError

from etl_craft.config.project import Project, relative_path_problem
from etl_craft.core.enums import Handler
from etl_craft.enginedb.metadata import ProjectMetadata, TaskRow
from etl_craft.lineage.trace import column_key, first_line, table_key, tables_read
from etl_craft.warehouse.audit import written_columns
from etl_craft.warehouse.literals import ParameterKind, parameter_kind, value_problem
from etl_craft.warehouse.substitution import placeholders, substitute

# Actions whose SELECT holds no rows for the target: DROP_TABLE has none at all.
_NO_SELECT = ("DROP_TABLE",)


@dataclass(frozen=True)
class TaskSql:
    """An active SQL task's SELECT with tokens replaced, or why it can't be read."""

    task: TaskRow
    sql: str | None
    problem: str | None


def active_tasks(metadata: ProjectMetadata) -> tuple[TaskRow, ...]:
    active = {p.pipeline_id for p in metadata.pipelines if p.active}
    return tuple(t for t in metadata.tasks if t.active and t.pipeline_id in active)


def has_select(task: TaskRow) -> bool:
    return task.handler is Handler.SQL and (task.parameter("ACTION") or "") not in _NO_SELECT


def task_placeholders(metadata: ProjectMetadata, task: TaskRow, dialect: str) -> dict[str, str]:
    """What the task's tokens are replaced with to parse its SQL: a literal of each one's type,
    its pipeline's parameters included, so the SQL parses as a run's would; an IDENTIFIER is
    its own pipeline's name, so each pipeline sharing the SQL reads its own tables."""
    own = [p for p in metadata.pipeline_parameters if p.pipeline_id == task.pipeline_id]
    kinds = {p.name: parameter_kind(p.type) for p in own}
    names = {
        p.name: p.value
        for p in own
        if p.value is not None
        and kinds[p.name] is ParameterKind.IDENTIFIER
        and value_problem(ParameterKind.IDENTIFIER, p.value) is None
    }
    return placeholders(dialect, kinds, names)


def task_sql(
    task: TaskRow,
    project: Project | None,
    metadata: ProjectMetadata,
    dialect: str,
    values: Mapping[str, str] | None = None,
) -> TaskSql:
    """The task's SELECT with its tokens replaced by ``values``, placeholders by default."""
    replacements = task_placeholders(metadata, task, dialect) if values is None else values
    inline, file = task.parameter("SOURCE_SQL"), task.parameter("SOURCE_SQL_FILE")
    if inline is not None:
        return TaskSql(task, substitute(inline, replacements), None)
    if file is None:
        return TaskSql(task, None, "the task sets neither SOURCE_SQL nor SOURCE_SQL_FILE")
    problem = relative_path_problem(file)
    if problem is None and project is None:
        problem = "there is no project folder holding sql_files/"
    if problem is not None:
        return TaskSql(task, None, f"SOURCE_SQL_FILE {file!r} can't be read: {problem}")
    assert project is not None
    path = project.sql_files_dir.joinpath(*Path(file.replace("\\", "/")).parts)
    if not path.is_file():
        return TaskSql(task, None, f"SOURCE_SQL_FILE {file!r}: found no file at {path}")
    return TaskSql(task, substitute(path.read_text(encoding="utf-8"), replacements), None)


@dataclass(frozen=True)
class RuleReads:
    reads: tuple[str, ...]  # the rules' target tables, then what their SQL reads
    problem: str | None  # the first rule whose SQL sqlglot can't parse


def rule_reads(task: TaskRow, metadata: ProjectMetadata, dialect: str) -> RuleReads:
    """What a rules task's rules read: a RULE_SQL reading a table is a read like a SELECT's."""
    replacements = task_placeholders(metadata, task, dialect)
    found: dict[str, None] = {}
    problem = None
    for rule in metadata.business_rules:
        if rule.task_id != task.task_id:
            continue
        found.setdefault(name_key(rule.target_table, dialect) or rule.target_table, None)
        sql = substitute(rule.rule_sql, replacements)
        try:
            found.update(dict.fromkeys(tables_read(sql, dialect)))
        except SqlglotError as error:
            reason = first_line(error)
            problem = problem or f"RULE_SQL of rule {rule.code}: sqlglot can't parse it: {reason}"
    return RuleReads(tuple(found), problem)


def target_of(task: TaskRow, dialect: str) -> str | None:
    """The table key a task writes: TARGET_OBJECT of a SQL or PYTHON task."""
    if task.handler not in (Handler.SQL, Handler.PYTHON):
        return None
    return name_key(task.parameter("TARGET_OBJECT"), dialect)


def history_targets(tasks: tuple[TaskRow, ...], dialect: str) -> frozenset[str]:
    """The tables an SCD2_MERGE writes: etl-craft keeps their history in columns of its own."""
    return frozenset(
        target
        for task in tasks
        if task.handler is Handler.SQL and task.parameter("ACTION") == "SCD2_MERGE"
        for target in (target_of(task, dialect),)
        if target is not None
    )


def managed_columns(history: bool, dialect: str) -> tuple[str, ...]:
    """The columns etl-craft writes itself on a target, as the dialect names them: a SELECT
    reading another task's target may filter on them (ACTIVE_FLAG, VALID_TO...)."""
    columns = written_columns(history=history)
    return tuple(column_key(c.name, dialect, quoted=False) for c in columns)


def name_key(name: str | None, dialect: str) -> str | None:
    if name is None:
        return None
    try:
        return table_key(name, dialect)
    except SqlglotError:
        return name.lower()
