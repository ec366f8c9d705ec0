"""validate's checks of task parameters against the handlers' declarations."""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterator

from etl_craft.core.enums import Handler
from etl_craft.core.errors import MetadataError
from etl_craft.enginedb.metadata import TaskRow
from etl_craft.handlers.files.spec import CSV_ONLY, FileFormat, shape_problems
from etl_craft.handlers.parameters import ParameterDeclaration, declarations_for, value_problem
from etl_craft.handlers.sql.spec import Action, ValidFrom
from etl_craft.operations.validate.findings import Finding, Subject
from etl_craft.warehouse.targets import TARGET_FORM, TargetObject

SOURCES = ("SOURCE_SQL", "SOURCE_SQL_FILE")
# Optional SQL parameters only some actions read; elsewhere they are set by mistake.
_READ_BY: dict[str, tuple[Action, ...]] = {
    "MERGE_KEY": (Action.SCD1_MERGE, Action.SCD2_MERGE, Action.DELETE_ROWS),
    "MERGE_COMPARE_COLUMNS": (Action.SCD1_MERGE, Action.SCD2_MERGE),
    "MERGE_DEDUPE_ORDER": (Action.SCD1_MERGE, Action.SCD2_MERGE),
    "DELETE_MODE": (Action.DELETE_ROWS,),
    "SCD2_VALID_FROM": (Action.SCD2_MERGE,),
    "SCD2_VALID_FROM_COLUMN": (Action.SCD2_MERGE,),
    "SCD2_MISSING_KEYS": (Action.SCD2_MERGE,),
    "SCD2_STALE_ROWS": (Action.SCD2_MERGE,),
    "ALLOW_EMPTY_SNAPSHOT": (Action.SCD2_MERGE,),
}
_TARGET_PARAMETERS = ("TARGET_OBJECT", "TARGET_TABLE")
_FILE_LOAD_ONLY = ("FILE_FORMAT", "FILE_COLUMNS", *CSV_ONLY)
NATIVE_FORMAT = "the warehouse's own"


def check_parameters(subject: Subject) -> list[Finding]:
    findings: list[Finding] = []
    for task in subject.tasks():
        declared = {d.name: d for d in declarations_for(task.handler)}
        findings += _unknown(subject, task, declared)
        findings += _required(subject, task, declared)
        findings += _values(subject, task, declared)
        if task.handler is Handler.SQL:
            findings += _sql_shape(subject, task)
        if task.handler is Handler.PYTHON:
            findings += _python_shape(subject, task)
    findings += _table_formats(subject)
    return findings


def _unknown(
    subject: Subject, task: TaskRow, declared: dict[str, ParameterDeclaration]
) -> Iterator[Finding]:
    for name in task.parameters:
        if name in declared:
            continue
        close = difflib.get_close_matches(name.upper(), list(declared), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        remedy = f"rename it to {close[0]}" if close else "delete it"
        yield subject.warn(
            "unknown-parameter",
            task,
            f"{name} is not a parameter {task.handler} tasks read{hint}; expected one of "
            f"{', '.join(declared)}",
            f"{remedy} in CFG_TASK_PARAMETERS",
            name,
        )


def _required(
    subject: Subject, task: TaskRow, declared: dict[str, ParameterDeclaration]
) -> Iterator[Finding]:
    for declaration in declared.values():
        if declaration.required and task.parameter(declaration.name) is None:
            yield _missing(subject, task, declaration.name, declaration.description)


def _missing(subject: Subject, task: TaskRow, name: str, why: str) -> Finding:
    return subject.fail(
        "required-parameter",
        task,
        f"{name} is not set; expected a value for this {task.handler} task: {why}",
        f"add {name} for the task in CFG_TASK_PARAMETERS",
        name,
    )


def _values(
    subject: Subject, task: TaskRow, declared: dict[str, ParameterDeclaration]
) -> Iterator[Finding]:
    for name, declaration in declared.items():
        value = task.parameter(name)
        if value is None:
            continue
        expectation = value_problem(declaration, value)
        if expectation is None and name in _TARGET_PARAMETERS:
            expectation = _target_problem(value)
        if expectation is not None:
            yield subject.fail(
                "parameter-value",
                task,
                f"{name} is {value!r}; {expectation}",
                f"fix the value of {name} in CFG_TASK_PARAMETERS",
                name,
            )


def _target_problem(value: str) -> str | None:
    try:
        TargetObject.parse(value)
    except MetadataError:
        return f"expected {TARGET_FORM}, each part a plain identifier"
    return None


def sql_action(task: TaskRow) -> Action | None:
    value = task.parameter("ACTION")
    return Action(value) if value in tuple(Action) else None


def _sql_shape(subject: Subject, task: TaskRow) -> Iterator[Finding]:
    action = sql_action(task)
    if action is None:
        return
    given = [name for name in SOURCES if task.parameter(name) is not None]
    if action is not Action.DROP_TABLE and not given:
        yield _missing(subject, task, "SOURCE_SQL", f"{action} reads one SELECT")
    if len(given) > 1:
        yield subject.fail(
            "required-parameter",
            task,
            "both SOURCE_SQL and SOURCE_SQL_FILE are set; expected exactly one",
            "delete one of them from CFG_TASK_PARAMETERS",
            "SOURCE_SQL_FILE",
        )
    if action.keyed and task.parameter("MERGE_KEY") is None:
        yield _missing(subject, task, "MERGE_KEY", f"{action} matches rows on their key")
    if action is Action.SCD2_MERGE:
        yield from _validity(subject, task)
    for name, readers in _READ_BY.items():
        if task.parameter(name) is not None and action not in readers:
            yield subject.warn(
                "unread-parameter",
                task,
                f"{name} is set but {action} does not read it; expected it only with "
                f"{', '.join(readers)}",
                f"delete {name} from CFG_TASK_PARAMETERS, or change ACTION",
                name,
            )


def _python_shape(subject: Subject, task: TaskRow) -> Iterator[Finding]:
    script, pattern = task.parameter("SCRIPT"), task.parameter("FILE_PATTERN")
    if script is None and pattern is None:
        yield _missing(subject, task, "SCRIPT", "a script to run, or FILE_PATTERN to load files")
    elif script is not None and pattern is not None:
        yield subject.fail(
            "required-parameter",
            task,
            f"both SCRIPT ({script!r}) and FILE_PATTERN ({pattern!r}) are set; expected exactly "
            "one: a script runs, or the built-in file load lands the files",
            "delete one of them from CFG_TASK_PARAMETERS",
            "FILE_PATTERN",
        )
    if pattern is not None:
        for name, problem, remedy in shape_problems(task.parameter):
            check = "required-parameter" if task.parameter(name) is None else "parameter-value"
            yield subject.fail(check, task, problem, remedy, name)
    yield from _unread_python(subject, task, file_load=pattern is not None)


def _unread_python(subject: Subject, task: TaskRow, *, file_load: bool) -> Iterator[Finding]:
    """Parameters only scripts read set on a file load, and the other way round."""
    readers = dict.fromkeys(_FILE_LOAD_ONLY, "FILE_PATTERN")
    if file_load:
        readers = {"INPUT_PARAMS": "SCRIPT"}
        if task.parameter("FILE_FORMAT") != FileFormat.CSV:
            readers |= dict.fromkeys(CSV_ONLY, "FILE_FORMAT CSV")
    for name, reader in readers.items():
        if task.parameter(name) is not None:
            yield subject.warn(
                "unread-parameter",
                task,
                f"{name} is set but this task does not read it; expected it only with {reader}",
                f"delete {name} from CFG_TASK_PARAMETERS",
                name,
            )


def _validity(subject: Subject, task: TaskRow) -> Iterator[Finding]:
    """SCD2_VALID_FROM = COLUMN and SCD2_VALID_FROM_COLUMN go together."""
    source = (task.parameter("SCD2_VALID_FROM") or ValidFrom.RUN_TIME.value).upper()
    column = task.parameter("SCD2_VALID_FROM_COLUMN")
    if source == ValidFrom.COLUMN and column is None:
        yield _missing(
            subject,
            task,
            "SCD2_VALID_FROM_COLUMN",
            "SCD2_VALID_FROM = COLUMN takes each version's start from that column of the SELECT",
        )
    if column is not None and source != ValidFrom.COLUMN:
        yield subject.warn(
            "unread-parameter",
            task,
            f"SCD2_VALID_FROM_COLUMN is {column!r} but SCD2_VALID_FROM is {source}, so the "
            "column is not read; expected SCD2_VALID_FROM = COLUMN with it",
            "set SCD2_VALID_FROM to COLUMN, or delete SCD2_VALID_FROM_COLUMN from "
            "CFG_TASK_PARAMETERS",
            "SCD2_VALID_FROM_COLUMN",
        )


def _writes(task: TaskRow) -> str | None:
    """The target a SQL task writes, as compared between tasks, or None."""
    target = task.parameter("TARGET_OBJECT")
    if task.handler is not Handler.SQL or target is None or _target_problem(target):
        return None
    return None if sql_action(task) is Action.DROP_TABLE else target.lower()


def _table_formats(subject: Subject) -> Iterator[Finding]:
    writers: dict[str, list[TaskRow]] = defaultdict(list)
    for task in subject.all_active_tasks():
        target = _writes(task)
        if target is not None:
            writers[target].append(task)
    for target, tasks in sorted(writers.items()):
        formats = {t.task_id: (t.parameter("TABLE_FORMAT") or NATIVE_FORMAT) for t in tasks}
        scoped = [t for t in tasks if subject.in_scope(t.pipeline_id)]
        if len(set(formats.values())) < 2 or not scoped:
            continue
        listed = ", ".join(
            f"{subject.metadata.pipeline_by_id(t.pipeline_id).code}.{t.code} ({formats[t.task_id]})"
            for t in tasks
        )
        yield subject.fail(
            "table-format",
            scoped[0],
            f"the tasks writing {target} use different table formats: {listed}; expected one "
            "format per target",
            "set the same TABLE_FORMAT on every task writing the target in CFG_TASK_PARAMETERS",
            "TABLE_FORMAT",
        )
