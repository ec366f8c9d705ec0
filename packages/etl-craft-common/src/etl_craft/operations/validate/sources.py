"""validate's checks of what tasks run: SELECTs, business rules, scripts and alert templates.

Nothing here runs anything: SQL is parsed with sqlglot in the warehouse's dialect, scripts
with ``ast`` (never imported), alert templates with ``string.Formatter``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import sqlglot
from sqlglot import exp

from etl_craft.config.project import relative_path_problem
from etl_craft.core.enums import Handler
from etl_craft.core.errors import SqlGuardError
from etl_craft.enginedb.metadata import TaskRow
from etl_craft.handlers.parameters import template_problem
from etl_craft.handlers.scripts.runner import ENTRY_POINT
from etl_craft.handlers.sql.spec import Action
from etl_craft.lineage.sources import task_placeholders
from etl_craft.operations.validate.findings import Finding, Subject
from etl_craft.operations.validate.parameters import sql_action
from etl_craft.warehouse.audit import MANAGED_NAMES
from etl_craft.warehouse.parsing import ParsedSelect, parse_select
from etl_craft.warehouse.substitution import parameters_used, substitute
from etl_craft.warehouse.targets import is_identifier

_MANAGED = frozenset(name.upper() for name in MANAGED_NAMES)
_MERGES = (Action.SCD1_MERGE, Action.SCD2_MERGE)


def check_sources(subject: Subject) -> list[Finding]:
    findings: list[Finding] = []
    for task in subject.tasks():
        if task.handler is Handler.SQL:
            findings += _sql_task(subject, task)
        elif task.handler is Handler.PYTHON:
            findings += _script(subject, task)
        elif task.handler is Handler.BUSINESS_RULES:
            findings += _business_rules(subject, task)
        else:
            findings += _alert_templates(subject, task)
    return findings


class _UnreadableError(Exception):
    def __init__(self, finding: Finding) -> None:
        self.finding = finding


def _project_file(subject: Subject, task: TaskRow, parameter: str, folder: str) -> Path:
    """The file a parameter names under one of the project's folders; _UnreadableError otherwise."""
    value = task.parameter(parameter) or ""
    check = "script" if parameter == "SCRIPT" else "sql"
    if subject.project is None:
        raise _UnreadableError(
            subject.fail(
                check,
                task,
                f"{parameter} {value!r} can't be read: there is no project folder holding "
                f"{folder}/; expected to run inside the project",
                "run etl-craft validate inside the project, or pass --config",
                parameter,
            )
        )
    problem = relative_path_problem(value)
    path = subject.project.root.joinpath(folder, *PurePosixPath(value.replace("\\", "/")).parts)
    if problem is None and not path.is_file():
        problem = f"found no file at {path}; expected a file under {folder}/"
    if problem is not None:
        raise _UnreadableError(
            subject.fail(
                check,
                task,
                f"{parameter} is {value!r}: {problem}",
                f"set {parameter} to a path relative to {folder}/, such as orders.sql",
                parameter,
            )
        )
    return path


def _sql_task(subject: Subject, task: TaskRow) -> Iterator[Finding]:
    action = sql_action(task)
    if action is None or action is Action.DROP_TABLE:
        return
    inline = task.parameter("SOURCE_SQL")
    parameter = "SOURCE_SQL" if inline is not None else "SOURCE_SQL_FILE"
    try:
        if inline is not None:
            text, label = inline, "SOURCE_SQL"
        elif task.parameter("SOURCE_SQL_FILE") is not None:
            path = _project_file(subject, task, "SOURCE_SQL_FILE", "sql_files")
            text, label = path.read_text(encoding="utf-8"), f"sql_files/{path.name}"
        else:
            return  # reported as a missing parameter
    except _UnreadableError as unreadable:
        yield unreadable.finding
        return
    undeclared = _undeclared_parameters(subject, task, text, f"the SELECT in {label}", parameter)
    if undeclared is not None:
        yield undeclared
        return
    sql = substitute(text, task_placeholders(subject.metadata, task, subject.dialect))
    try:
        parsed = parse_select(sql, subject.dialect, subject=f"the SELECT in {label}")
    except SqlGuardError as error:
        yield subject.fail("sql", task, str(error), f"fix the query in {label}", parameter)
        return
    yield from _output_columns(subject, task, parsed, parameter)
    if action in _MERGES:
        yield from _float_compare_columns(subject, task, sql)


def _undeclared_parameters(
    subject: Subject, task: TaskRow, sql: str, label: str, parameter: str | None
) -> Finding | None:
    """A `$$param.NAME` whose pipeline declares no NAME: a run would refuse the SQL."""
    declared = {
        p.name for p in subject.metadata.pipeline_parameters if p.pipeline_id == task.pipeline_id
    }
    unknown = [name for name in parameters_used(sql) if name not in declared]
    if not unknown:
        return None
    pipeline = subject.metadata.pipeline_by_id(task.pipeline_id).code
    return subject.fail(
        "sql-token",
        task,
        f"{label} reads {', '.join('$$param.' + n for n in unknown)}, but "
        f"pipeline {pipeline} declares no parameter {', '.join(unknown)} (it declares: "
        f"{', '.join(sorted(declared)) or 'none'})",
        f"add {unknown[0]} to CFG_PIPELINE_PARAMETERS of {pipeline}, or fix the token",
        parameter,
    )


def _output_columns(
    subject: Subject, task: TaskRow, parsed: ParsedSelect, parameter: str
) -> Iterator[Finding]:
    # With a * in the select list the names are only known at run time, which checks them then.
    columns = parsed.output_columns or ()
    managed = [name for name in columns if name.upper() in _MANAGED]
    if managed:
        yield subject.fail(
            "output-columns",
            task,
            f"the SELECT returns {', '.join(managed)}, which etl-craft writes itself; expected "
            "none of the engine-managed columns",
            "list the columns you need instead of them, or alias them to other names",
            parameter,
        )
    quoted = [name for name in columns if not is_identifier(name)]
    if quoted:
        yield subject.fail(
            "output-columns",
            task,
            f"the SELECT returns {', '.join(repr(n) for n in quoted)}, which need quoting; "
            "expected plain names of letters, digits and underscores",
            "alias each of them to a plain name, such as AS order_total",
            parameter,
        )


def _float_compare_columns(subject: Subject, task: TaskRow, sql: str) -> Iterator[Finding]:
    """Compare columns the SELECT visibly makes floating-point.

    Without the warehouse, a column's type is known only where the SELECT states it: a cast
    (x::double, CAST(x AS REAL), FLOAT '1.5') or, on DuckDB, a literal in exponent notation.
    A float read from a table is caught at run time, when the stage's types are known.
    """
    query = sqlglot.parse_one(sql, read=subject.dialect)
    if not isinstance(query, exp.Query):
        return
    listed = task.parameter("MERGE_COMPARE_COLUMNS")
    keys = {k.strip().lower() for k in (task.parameter("MERGE_KEY") or "").split(",")}
    for select in query.selects:
        name = select.alias_or_name
        compared = (
            name.lower() in {c.strip().lower() for c in listed.split(",")}
            if listed is not None
            else name.lower() not in keys
        )
        if compared and _is_float(
            select.this if isinstance(select, exp.Alias) else select, subject
        ):
            yield subject.fail(
                "float-compare-column",
                task,
                f"MERGE_COMPARE_COLUMNS includes {name}, which the SELECT makes floating-point "
                f"({select.sql(dialect=subject.dialect)}); expected a type with a stable text "
                "form for the change hash",
                f"cast {name} to DECIMAL in the SELECT, or leave it out of MERGE_COMPARE_COLUMNS",
                "MERGE_COMPARE_COLUMNS",
            )


def _is_float(expression: exp.Expr, subject: Subject) -> bool:
    while isinstance(expression, exp.Paren):
        expression = expression.this
    if isinstance(expression, exp.Cast | exp.TryCast):
        return expression.to.is_type(*exp.DataType.FLOAT_TYPES)
    if isinstance(expression, exp.Literal) and not expression.is_string:
        # DuckDB reads 1e3 as DOUBLE; PostgreSQL reads it as NUMERIC.
        return subject.dialect == "duckdb" and "e" in expression.this.lower()
    return False


def _script(subject: Subject, task: TaskRow) -> Iterator[Finding]:
    if task.parameter("SCRIPT") is None:
        return  # reported as a missing parameter
    try:
        path = _project_file(subject, task, "SCRIPT", "ingestion_scripts")
    except _UnreadableError as unreadable:
        yield unreadable.finding
        return
    try:
        module = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError) as error:
        where = f" at line {error.lineno}" if isinstance(error, SyntaxError) else ""
        reason = error.msg if isinstance(error, SyntaxError) else str(error)
        yield subject.fail(
            "script",
            task,
            f"ingestion_scripts/{task.parameter('SCRIPT')} does not parse: {reason}{where}; "
            "expected Python source",
            "fix the script (validate parses it with ast and never runs it)",
            "SCRIPT",
        )
        return
    if not any(
        isinstance(node, ast.FunctionDef) and node.name == ENTRY_POINT for node in module.body
    ):
        yield subject.fail(
            "script",
            task,
            f"ingestion_scripts/{task.parameter('SCRIPT')} defines no top-level "
            f"{ENTRY_POINT}(context) function; expected the entry point etl-craft calls",
            f"define def {ENTRY_POINT}(context: ScriptContext) -> ScriptResult in the script",
            "SCRIPT",
        )


def _business_rules(subject: Subject, task: TaskRow) -> Iterator[Finding]:
    rules = [r for r in subject.metadata.business_rules if r.task_id == task.task_id]
    if not rules:
        yield subject.warn(
            "business-rule",
            task,
            "the task has no active rule in CFG_BUSINESS_RULES; expected at least one",
            "add its rules to CFG_BUSINESS_RULES, or deactivate the task",
        )
    replacements = task_placeholders(subject.metadata, task, subject.dialect)
    for rule in rules:
        label = f"RULE_SQL of rule {rule.code}"
        undeclared = _undeclared_parameters(subject, task, rule.rule_sql, label, None)
        if undeclared is not None:
            yield undeclared
        else:
            yield from _rule_select(subject, task, substitute(rule.rule_sql, replacements), label)
        bad = [c.strip() for c in rule.key_columns.split(",") if not is_identifier(c.strip())]
        if bad:
            yield subject.fail(
                "business-rule",
                task,
                f"KEY_COLUMNS of rule {rule.code} names {bad[0]!r}; expected plain column "
                "names separated by commas",
                f"fix KEY_COLUMNS of rule {rule.code} in CFG_BUSINESS_RULES",
            )


def _rule_select(subject: Subject, task: TaskRow, sql: str, label: str) -> Iterator[Finding]:
    try:
        parse_select(sql, subject.dialect, subject=label)
    except SqlGuardError as error:
        yield subject.fail("business-rule", task, str(error), f"fix {label}")


def _alert_templates(subject: Subject, task: TaskRow) -> Iterator[Finding]:
    for name in ("SUBJECT", "BODY"):
        template = task.parameter(name)
        problem = None if template is None else template_problem(template)
        if problem:
            yield subject.fail(
                "alert-template",
                task,
                f"{name} {template!r} can't be filled: {problem}",
                f"fix the {name} template in CFG_TASK_PARAMETERS",
                name,
            )
