"""A SQL task previewed: its SELECT's rows and its action rehearsed; nothing kept or recorded.

It follows run_sql_task step for step (the same spec, SELECT guard and hash-version check), so
what it shows is what a run starting now would read, write or be refused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from etl_craft.core.errors import MetadataError, WarehouseError
from etl_craft.handlers.invocation import Task
from etl_craft.handlers.sql.rehearsal import ActionRehearsal, Sample, rehearse_action, sample_select
from etl_craft.handlers.sql.source_errors import located
from etl_craft.handlers.sql.spec import SqlActionSpec
from etl_craft.handlers.sql_task import (
    MERGES,
    check_source_select,
    hashed_target,
    refuse_outdated_hash,
    source_name,
    sql_action_spec,
)
from etl_craft.warehouse import connect
from etl_craft.warehouse.connection import WarehouseConnection


@dataclass(frozen=True)
class SqlPreview:
    spec: SqlActionSpec
    warehouse: str  # the warehouse dialect's name
    sample: Sample | None  # None for DROP_TABLE, which has no SELECT
    action: ActionRehearsal


def preview_sql_task(task: Task, limit: int) -> SqlPreview:
    spec = sql_action_spec(task)
    with connect(task.environment.connector.warehouse) as conn:
        check_source_select(task, conn, spec)
        sample = None if spec.source_sql is None else _sample(task, conn, spec, limit)
        outdated = _outdated_hash(task, conn, spec)
        if outdated is not None:
            action = ActionRehearsal(None, None, outdated)
        else:
            action = _located(task, spec, rehearse_action(conn, spec))
        return SqlPreview(spec, conn.dialect.name, sample, action)


def _sample(task: Task, conn: WarehouseConnection, spec: SqlActionSpec, limit: int) -> Sample:
    assert spec.source_sql is not None
    try:
        return sample_select(conn, spec, limit)
    except WarehouseError as error:
        where = source_name(task)
        restated = located(error, spec.source_sql, where)
        if restated is not error:
            raise restated from error
        raise WarehouseError(
            f"{where} (pipeline {task.invocation.pipeline_code}) failed in the "
            f"{conn.dialect.name} warehouse: {error}; fix the SELECT and preview it again"
        ) from error


def _outdated_hash(
    task: Task, conn: WarehouseConnection, spec: SqlActionSpec
) -> MetadataError | None:
    if spec.action not in MERGES:
        return None
    try:
        refuse_outdated_hash(task, hashed_target(conn, spec.target), spec)
    except MetadataError as error:
        return error
    return None


def _located(task: Task, spec: SqlActionSpec, action: ActionRehearsal) -> ActionRehearsal:
    """A warehouse refusal pointed at the line of the task's SQL, as a run reports it."""
    error = action.refusal
    if not isinstance(error, WarehouseError) or spec.source_sql is None:
        return action
    return replace(action, refusal=located(error, spec.source_sql, source_name(task)))
