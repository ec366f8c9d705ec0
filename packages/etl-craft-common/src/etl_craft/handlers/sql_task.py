"""A SQL task attempt: its CFG_ parameters turned into an action applied to the warehouse."""

from __future__ import annotations

from typing import TypeVar

from etl_craft.core.errors import MetadataError
from etl_craft.handlers.invocation import HandlerResult, Task
from etl_craft.handlers.sql.actions import run_sql_action
from etl_craft.handlers.sql.spec import Action, DedupeOrder, DeleteMode, RefreshType, SqlActionSpec
from etl_craft.warehouse import connect, parse_select
from etl_craft.warehouse.targets import TargetObject
from etl_craft.warehouse.tokens import TokenValues, substitute

FILTER_NAME = "pipeline_id_filter"


def run_sql_task(task: Task) -> HandlerResult:
    spec = sql_action_spec(task)
    with connect(task.environment.connector.warehouse) as conn:
        if spec.source_sql is not None:
            parse_select(
                spec.source_sql,
                conn.dialect.sqlglot_name,
                subject=f"the SELECT of task {task.invocation.task_code}",
            )
        counts = run_sql_action(conn, spec)
    return HandlerResult(counts=counts)


def sql_action_spec(task: Task) -> SqlActionSpec:
    invocation = task.invocation
    action = _choice(task, "ACTION", Action, None)
    refresh = _choice(task, "REFRESH_TYPE", RefreshType, RefreshType.FULL)
    return SqlActionSpec(
        action=action,
        target=TargetObject.parse(_required(task, "TARGET_OBJECT")),
        source_sql=None if action is Action.DROP_TABLE else _source(task, refresh),
        pipeline_id=invocation.pipeline_id,
        pipeline_run_id=invocation.pipeline_run_id,
        task_run_id=invocation.task_run_id,
        attempt_id=invocation.attempt_id,
        actor=task.environment.connector.orchestration.project,
        run_date=invocation.run_date,
        refresh_type=refresh,
        merge_key=_columns(task.parameter("MERGE_KEY")),
        compare_columns=_columns(task.parameter("MERGE_COMPARE_COLUMNS")),
        dedupe_order=DedupeOrder(task.parameter("MERGE_DEDUPE_ORDER", "") or ""),
        delete_mode=_choice(task, "DELETE_MODE", DeleteMode, DeleteMode.HARD),
        schema_evolution=_flag(task, "SCHEMA_EVOLUTION"),
        ledger_schema=task.environment.connector.warehouse.ledger_schema,
    )


def _source(task: Task, refresh: RefreshType) -> str:
    inline, file = task.parameter("SOURCE_SQL"), task.parameter("SOURCE_SQL_FILE")
    if bool(inline) == bool(file):
        raise MetadataError(
            f"task {task.invocation.task_code} sets {'both' if inline else 'neither'} of "
            "SOURCE_SQL and SOURCE_SQL_FILE; set exactly one"
        )
    sql = inline if inline else _read_file(task, str(file))
    assert sql is not None
    invocation = task.invocation
    values = TokenValues(
        invocation.pipeline_id,
        invocation.pipeline_run_id,
        invocation.task_run_id,
        invocation.run_date,
        full_refresh=refresh is RefreshType.FULL,
    ).as_sql()
    enabled = {
        name: value
        for name, value in values.items()
        if _flag(task, "PIPELINE_ID_FILTER" if name == FILTER_NAME else "PIPELINE_ID_SUBSTITUTION")
    }
    return substitute(sql, enabled) if enabled else sql


def _read_file(task: Task, relative: str) -> str:
    project = task.environment.project
    if project is None:
        raise MetadataError(
            f"task {task.invocation.task_code} reads SOURCE_SQL_FILE {relative!r}, but the task "
            "process runs outside a project; run it from the project or use SOURCE_SQL"
        )
    # resolve() refuses absolute paths and paths that climb out of the project.
    path = project.resolve(f"{project.sql_files_dir.relative_to(project.root)}/{relative}")
    if not path.is_file():
        raise MetadataError(
            f"SOURCE_SQL_FILE {relative!r} of task {task.invocation.task_code} is not a file under "
            f"{project.sql_files_dir}; create it or fix the parameter"
        )
    return path.read_text()


def _required(task: Task, name: str) -> str:
    value = task.parameter(name)
    if value is None:
        raise MetadataError(
            f"task {task.invocation.task_code} has no {name}; add it to CFG_TASK_PARAMETERS "
            "with a project migration"
        )
    return value


Choice = TypeVar("Choice", Action, RefreshType, DeleteMode)


def _choice(task: Task, name: str, choices: type[Choice], default: Choice | None) -> Choice:
    value = task.parameter(name)
    if value is None and default is not None:
        return default
    try:
        return choices(_required(task, name).upper())
    except ValueError:
        names = ", ".join(choice.value for choice in choices)
        raise MetadataError(
            f"{name} of task {task.invocation.task_code} is {value!r}; expected one of {names}"
        ) from None


def _flag(task: Task, name: str) -> bool:
    return (task.parameter(name, "N") or "N").upper() in ("Y", "TRUE")


def _columns(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())
