"""`preview`: a SQL task's SELECT rows and what its action would write, recording nothing.

The task is resolved as a run resolves it (its CFG_ parameters, SQL file and tokens, through
the SQL handler's own spec), then its SELECT is staged and its action rehearsed in warehouse
transactions that are rolled back (handlers.sql.rehearsal). The Engine DB is only read: no run,
task run, attempt or other AUD_ row comes of a preview.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from types import MappingProxyType
from typing import ClassVar

from etl_craft.config.connector import Connector
from etl_craft.core.counts import Counts
from etl_craft.core.defaults import PREVIEW_ROWS
from etl_craft.core.enums import AttemptStatus, Handler
from etl_craft.core.errors import ConfigurationError, EtlCraftError, NotFoundError, UsageError
from etl_craft.enginedb.attempts import AttemptInvocation
from etl_craft.enginedb.metadata import ProjectMetadata, TaskRow, read_project_metadata
from etl_craft.handlers.invocation import Task, TaskEnvironment
from etl_craft.handlers.secrets import attempt_redactor
from etl_craft.handlers.sql.rehearsal import ActionRehearsal, DuplicateKeys, Sample
from etl_craft.handlers.sql.spec import Action, DeleteMode
from etl_craft.handlers.sql_preview import SqlPreview, preview_sql_task
from etl_craft.operations.context import OperationContext
from etl_craft.operations.runs.foreground import new_run_date

# The ids a preview's tokens and stamps get: no run exists, and real ids start at 1.
NO_RUN = 0

Cell = str | int | float | bool | None


@dataclass(frozen=True)
class PreviewColumn:
    name: str
    type: str


@dataclass(frozen=True)
class DuplicateKeysView:
    key_columns: tuple[str, ...]
    keys: int  # keys with more than one row in the batch
    rows: int  # rows beyond one per key: what a merge's dedupe drops
    examples: tuple[tuple[Cell, ...], ...]  # up to five such keys


@dataclass(frozen=True)
class ActionEffect:
    """What the action would do, in a data engineer's words, from the counts it computed."""

    inserted: int  # rows inserted; SCD2: versions opened, for new and changed keys (and deletions)
    updated: int  # SCD1: rows updated in place
    closed: int  # SCD2: current versions closed, because their key changed or returned
    # Rows deleted (DELETE_ROWS SOFT: flagged), or dropped with the table; SCD2: current
    # versions closed because the SELECT no longer returns their key (SCD2_MISSING_KEYS).
    deleted: int
    duplicates: int  # rows beyond one per key, left out by the merge
    new_keys: int | None  # merges: keys without a current row (SCD2: or returning)
    changed_keys: int | None  # merges: keys whose current row differs
    unchanged_keys: int | None  # merges: keys whose current row already matches
    creates_table: bool
    target_rows_before: int | None  # None: the target doesn't exist
    target_rows_after: int | None


@dataclass(frozen=True)
class Refusal:
    kind: str  # the exit code's name, such as SQL_GUARD
    exit_code: int
    message: str


@dataclass(frozen=True)
class Preview:
    schema: ClassVar[str] = "etl-craft/preview/1"
    project_code: str
    pipeline_code: str
    task_code: str
    action: Action
    target: str
    source: str | None  # sql_files/<file> or SOURCE_SQL; None for DROP_TABLE
    delete_mode: DeleteMode | None  # DELETE_ROWS only
    warehouse: str
    run_date: date
    limit: int
    columns: tuple[PreviewColumn, ...]
    rows: tuple[tuple[Cell, ...], ...]  # the first `limit` rows of the SELECT
    source_rows: int | None  # every row of the SELECT
    duplicate_keys: DuplicateKeysView | None  # None without a MERGE_KEY
    counts: Counts | None  # what a run would record, by the action's own statements
    effect: ActionEffect | None
    refusal: Refusal | None  # what a run would fail with; then counts and effect are None


def preview_task(
    ctx: OperationContext,
    task_code: str,
    pipeline_code: str | None = None,
    *,
    limit: int = PREVIEW_ROWS,
    run_date: date | None = None,
) -> Preview:
    if limit < 0:
        raise UsageError(f"--limit is {limit}; expected 0 or more rows to show, such as 20")
    connector = _connector(ctx)
    with ctx.engine.read() as conn:
        metadata = read_project_metadata(conn, ctx.project_code)
    row = _task(metadata, task_code, pipeline_code)
    task = _task_of(ctx, connector, metadata, row, new_run_date(ctx, run_date))
    found = preview_sql_task(task, limit)
    return _view(task, found, limit)


def _connector(ctx: OperationContext) -> Connector:
    if ctx.connector is None:
        raise ConfigurationError(
            "etl-craft preview found no craft-connector.yml, so it knows no warehouse; run it "
            "from the project folder or pass --config"
        )
    return ctx.connector


def _task(metadata: ProjectMetadata, task_code: str, pipeline_code: str | None) -> TaskRow:
    if pipeline_code is not None:
        pipeline = metadata.pipeline(pipeline_code)
        candidates = metadata.tasks_of(pipeline.pipeline_id)
    else:
        active = {p.pipeline_id for p in metadata.pipelines if p.active}
        candidates = tuple(t for t in metadata.tasks if t.active and t.pipeline_id in active)
    found = [task for task in candidates if task.code == task_code]
    if not found:
        where = f"pipeline {pipeline_code}" if pipeline_code else f"project {metadata.project_code}"
        codes = ", ".join(sorted({task.code for task in candidates})) or "none"
        raise NotFoundError(
            f"{where} has no active task {task_code!r}; its active tasks are {codes}: check --task"
        )
    if len(found) > 1:
        names = ", ".join(sorted(metadata.pipeline_by_id(t.pipeline_id).code for t in found))
        raise UsageError(
            f"task code {task_code!r} names a task in each of the pipelines {names}; add "
            "--pipeline to say which one to preview"
        )
    (task,) = found
    if task.handler is not Handler.SQL:
        owner = metadata.pipeline_by_id(task.pipeline_id).code
        raise UsageError(
            f"task {task_code} of pipeline {owner} is a {task.handler} task; preview shows "
            "a SQL task's SELECT and action only: name a SQL task"
        )
    return task


def _task_of(
    ctx: OperationContext,
    connector: Connector,
    metadata: ProjectMetadata,
    row: TaskRow,
    run_date: date,
) -> Task:
    """The task as an attempt of a run starting now would get it, but with no run behind it."""
    pipeline = metadata.pipeline_by_id(row.pipeline_id)
    parameters = [p for p in metadata.pipeline_parameters if p.pipeline_id == pipeline.pipeline_id]
    invocation = AttemptInvocation(
        attempt_id=NO_RUN,
        attempt_number=NO_RUN,
        status=AttemptStatus.RUNNING,
        owner_id=None,
        task_run_id=NO_RUN,
        pipeline_run_id=NO_RUN,
        pipeline_id=pipeline.pipeline_id,
        task_id=row.task_id,
        project_code=metadata.project_code,
        pipeline_code=pipeline.code,
        task_code=row.code,
        handler=row.handler,
        run_key=f"preview:{run_date.isoformat()}",
        run_date=run_date,
        parameters=MappingProxyType(dict(row.parameters)),
        pipeline_parameters=MappingProxyType({p.name: p.value for p in parameters}),
        pipeline_parameter_types=MappingProxyType({p.name: p.type for p in parameters}),
    )
    environment = TaskEnvironment(
        connector=connector,
        project=ctx.project,
        engine=ctx.engine,
        log=logging.LoggerAdapter(logging.getLogger("etl_craft.preview")),
        actor=ctx.actor,
        redactor=attempt_redactor(connector, invocation),
    )
    return Task(invocation, environment)


def _view(task: Task, found: SqlPreview, limit: int) -> Preview:
    spec, sample = found.spec, found.sample
    invocation = task.invocation
    file = task.parameter("SOURCE_SQL_FILE")
    source = None if spec.source_sql is None else (f"sql_files/{file}" if file else "SOURCE_SQL")
    return Preview(
        project_code=invocation.project_code,
        pipeline_code=invocation.pipeline_code,
        task_code=invocation.task_code,
        action=spec.action,
        target=spec.target.sql,
        source=source,
        delete_mode=spec.delete_mode if spec.action is Action.DELETE_ROWS else None,
        warehouse=found.warehouse,
        run_date=invocation.run_date,
        limit=limit,
        columns=tuple(PreviewColumn(c.name, c.type) for c in sample.columns) if sample else (),
        rows=tuple(tuple(_cell(value) for value in row) for row in sample.rows) if sample else (),
        source_rows=sample.total if sample else None,
        duplicate_keys=_duplicates(spec.merge_key, sample),
        counts=found.action.counts,
        effect=_effect(spec.action, found.action),
        refusal=_refusal(task, found.action.refusal),
    )


def _duplicates(keys: tuple[str, ...], sample: Sample | None) -> DuplicateKeysView | None:
    found: DuplicateKeys | None = sample.duplicates if sample else None
    if found is None:
        return None
    examples = tuple(tuple(_cell(value) for value in key) for key in found.examples)
    return DuplicateKeysView(keys, found.keys, found.rows, examples)


def _effect(action: Action, rehearsal: ActionRehearsal) -> ActionEffect | None:
    counts, before = rehearsal.counts, rehearsal.target_before
    if counts is None:
        return None
    inserted, updated = counts.inserted or 0, counts.updated or 0
    merge = action in (Action.SCD1_MERGE, Action.SCD2_MERGE)
    scd2 = action is Action.SCD2_MERGE
    replaced = action is Action.CREATE_TABLE and before is not None
    return ActionEffect(
        inserted=inserted,
        updated=0 if scd2 else updated,
        closed=updated if scd2 else 0,
        deleted=(before or 0) if replaced else counts.deleted or 0,
        duplicates=counts.duplicates or 0,
        # The merges count their keys themselves, by what they found for each.
        new_keys=counts.new_keys if merge else None,
        changed_keys=counts.changed_keys if merge else None,
        unchanged_keys=counts.unchanged_keys if merge else None,
        creates_table=action is Action.CREATE_TABLE
        or (action is Action.SETUP_TABLE and before is None),
        target_rows_before=before,
        target_rows_after=counts.target,
    )


def _refusal(task: Task, error: EtlCraftError | None) -> Refusal | None:
    if error is None:
        return None
    code = error.exit_code
    return Refusal(code.name, int(code), task.environment.redactor(str(error)))


def _cell(value: object) -> Cell:
    """A warehouse value as JSON carries it; exact decimals and instants as text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return str(value)
