"""A SQL task attempt: its CFG_ parameters turned into an action applied to the warehouse."""

from __future__ import annotations

from typing import Any, TypeVar

from etl_craft.core.enums import Handler
from etl_craft.core.errors import EngineDBError, MetadataError, WarehouseError
from etl_craft.enginedb.hash_versions import (
    HashedTarget,
    forget_version,
    record_version,
    recorded_version,
)
from etl_craft.enginedb.metadata import read_project_metadata
from etl_craft.handlers.invocation import HandlerResult, Task
from etl_craft.handlers.sql.apply import run_sql_action
from etl_craft.handlers.sql.source_errors import located
from etl_craft.handlers.sql.spec import (
    Action,
    DedupeOrder,
    DeleteMode,
    MissingKeys,
    RefreshType,
    SqlActionSpec,
    StaleRows,
    ValidFrom,
)
from etl_craft.handlers.sql.tokens import SWITCHED, read_parameters
from etl_craft.warehouse import SQL_DIALECTS, connect, parse_select
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.dialect import CHANGE_HASH_VERSION
from etl_craft.warehouse.substitution import TokenValues, substitute
from etl_craft.warehouse.targets import TargetObject

MERGES = frozenset({Action.SCD1_MERGE, Action.SCD2_MERGE})
# These write every row of the target anew, so afterwards all of them hold the current version.
REPLACES = frozenset({Action.CREATE_TABLE, Action.OVERWRITE_TABLE})
STAMPS_HASH_KEY = MERGES | REPLACES | {Action.APPEND_TABLE}


def run_sql_task(task: Task) -> HandlerResult:
    spec = sql_action_spec(task)
    with connect(task.environment.connector.warehouse) as conn:
        check_source_select(task, conn, spec)
        target = hashed_target(conn, spec.target)
        if spec.action in MERGES:
            refuse_outdated_hash(task, target, spec)
        try:
            counts = run_sql_action(conn, spec)
        except WarehouseError as error:
            if spec.source_sql is None:
                raise
            raise located(error, spec.source_sql, source_name(task)) from error
    _keep_hash_version(task, target, spec)
    return HandlerResult(counts=counts)


def hashed_target(conn: WarehouseConnection, target: TargetObject) -> HashedTarget:
    """How AUD_TARGET_HASH_VERSION names the target (see enginedb.hash_versions)."""
    resolved = conn.resolve(target)
    database = resolved.database or conn.current_database()
    return HashedTarget.of(conn.dialect.name, database, resolved.schema, resolved.table)


def refuse_outdated_hash(task: Task, target: HashedTarget, spec: SqlActionSpec) -> None:
    """A merge compares HASH_KEY values: of another version, every row would look changed."""
    with task.environment.engine.read() as conn:
        version = recorded_version(conn, target)
    if version is None or version == CHANGE_HASH_VERSION:
        return
    raise MetadataError(
        f"{spec.action} of task {task.invocation.task_code} into {spec.target} is refused before "
        f"touching it: AUD_TARGET_HASH_VERSION records change-hash version {version} for "
        f"{target}, but this etl-craft computes version {CHANGE_HASH_VERSION}, so every row "
        f"would compare as changed; run `etl-craft rehash --target {spec.target}` to recompute "
        "its HASH_KEY values, then rerun the task"
    )


def _keep_hash_version(task: Task, target: HashedTarget, spec: SqlActionSpec) -> None:
    """Record the version of the HASH_KEY values just committed; forget it with the table.

    The warehouse commit is the action's outcome. A failure here only leaves the version
    unknown or stale, which the next write or `etl-craft rehash` repairs, so it is logged,
    not raised into a retry of committed work.
    """
    if spec.action not in STAMPS_HASH_KEY and spec.action is not Action.DROP_TABLE:
        return
    actor = task.environment.actor
    try:
        with task.environment.engine.transaction(actor) as conn:
            if spec.action is Action.DROP_TABLE:
                forget_version(conn, target)
            else:
                replace = spec.action in REPLACES
                record_version(conn, target, CHANGE_HASH_VERSION, actor, replace=replace)
    except EngineDBError as error:
        task.environment.log.warning(
            "couldn't update the change-hash version of %s in AUD_TARGET_HASH_VERSION after "
            "its committed %s: %s; the next write records it, or run etl-craft rehash "
            "--target %s",
            target,
            spec.action,
            error,
            spec.target,
        )


def check_source_select(task: Task, conn: WarehouseConnection, spec: SqlActionSpec) -> None:
    """Refuses a task's SELECT the warehouse's dialect cannot parse, before anything runs it."""
    if spec.source_sql is not None:
        parse_select(
            spec.source_sql,
            conn.dialect.sqlglot_name,
            subject=f"the SELECT of task {task.invocation.task_code}",
        )


def sql_action_spec(task: Task) -> SqlActionSpec:
    invocation = task.invocation
    action = _choice(task, "ACTION", Action, None)
    refresh = _choice(task, "REFRESH_TYPE", RefreshType, RefreshType.FULL)
    target = TargetObject.parse(_required(task, "TARGET_OBJECT"))
    return SqlActionSpec(
        action=action,
        target=target,
        source_sql=None if action is Action.DROP_TABLE else _source(task, refresh),
        pipeline_id=invocation.pipeline_id,
        pipeline_run_id=invocation.pipeline_run_id,
        task_run_id=invocation.task_run_id,
        attempt_id=invocation.attempt_id,
        # The warehouse rows' CREATED_BY/UPDATED_BY name the task that wrote them.
        actor=f"{invocation.pipeline_code}.{invocation.task_code}",
        run_date=invocation.run_date,
        refresh_type=refresh,
        merge_key=parameter_columns(task.parameter("MERGE_KEY")),
        compare_columns=parameter_columns(task.parameter("MERGE_COMPARE_COLUMNS")),
        dedupe_order=DedupeOrder(task.parameter("MERGE_DEDUPE_ORDER", "") or ""),
        delete_mode=_choice(task, "DELETE_MODE", DeleteMode, DeleteMode.HARD),
        schema_evolution=_flag(task, "SCHEMA_EVOLUTION"),
        **(_history(task) if action is Action.SCD2_MERGE else {}),
        history_columns=action.creates and _kept_as_history(task, target),
        ledger_schema=task.environment.connector.warehouse.ledger_schema,
    )


def _history(task: Task) -> dict[str, Any]:
    """SCD2_MERGE's validity and missing-key parameters; other actions don't read them."""
    return {
        "valid_from": _choice(task, "SCD2_VALID_FROM", ValidFrom, ValidFrom.RUN_TIME),
        "valid_from_column": (task.parameter("SCD2_VALID_FROM_COLUMN") or "").strip() or None,
        "missing_keys": _choice(task, "SCD2_MISSING_KEYS", MissingKeys, MissingKeys.KEEP),
        "stale_rows": _choice(task, "SCD2_STALE_ROWS", StaleRows, StaleRows.IGNORE),
        "allow_empty_snapshot": _flag(task, "ALLOW_EMPTY_SNAPSHOT"),
    }


def _kept_as_history(task: Task, target: TargetObject) -> bool:
    """Whether an active SCD2_MERGE task of the project writes ``target``.

    A table SETUP_TABLE or CREATE_TABLE makes for an SCD2 merge needs the validity columns
    the merge keeps history in, and a SELECT may not return them itself.
    """
    with task.environment.engine.read() as conn:
        metadata = read_project_metadata(conn, task.invocation.project_code)
    active = {pipeline.pipeline_id for pipeline in metadata.pipelines if pipeline.active}
    wanted = target.sql.lower()
    return any(
        other.active
        and other.pipeline_id in active
        and other.handler is Handler.SQL
        and (other.parameter("ACTION") or "").upper() == Action.SCD2_MERGE
        and _same_target(other.parameter("TARGET_OBJECT"), wanted)
        for other in metadata.tasks
    )


def _same_target(text: str | None, wanted: str) -> bool:
    try:
        return text is not None and TargetObject.parse(text).sql.lower() == wanted
    except MetadataError:
        return False  # validate reports a TARGET_OBJECT that doesn't parse


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
    parameters = read_parameters(
        sql,
        invocation.pipeline_code,
        invocation.pipeline_parameters,
        invocation.pipeline_parameter_types,
        source_name(task),
    )
    values = TokenValues(
        invocation.pipeline_id,
        invocation.pipeline_run_id,
        invocation.task_run_id,
        invocation.run_date,
        full_refresh=refresh is RefreshType.FULL,
        pipeline_code=invocation.pipeline_code,
        run_key=invocation.run_key,
        parameters=parameters,
    ).as_sql(SQL_DIALECTS[task.environment.connector.warehouse.type])
    switched_on = {name: _flag(task, switch) for name, switch in SWITCHED.items()}
    return substitute(sql, {k: v for k, v in values.items() if switched_on.get(k, True)})


def source_name(task: Task) -> str:
    file = task.parameter("SOURCE_SQL_FILE")
    code = task.invocation.task_code
    return f"SOURCE_SQL_FILE sql_files/{file} of task {code}" if file else f"SOURCE_SQL of {code}"


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


Choice = TypeVar("Choice", Action, RefreshType, DeleteMode, ValidFrom, MissingKeys, StaleRows)


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


def parameter_columns(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())
