"""`etl-craft audit`: who did what, from AUD_ACTIONS and AUD_METADATA_CHANGES."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any, ClassVar

from etl_craft.core.errors import NotFoundError
from etl_craft.core.redaction import SensitiveNames, mask_parameter
from etl_craft.core.time import as_utc
from etl_craft.enginedb.interventions import audit_actions, audit_metadata_changes
from etl_craft.enginedb.metadata import active_project_id
from etl_craft.handlers.secrets import sensitive_names
from etl_craft.operations.context import OperationContext
from etl_craft.operations.runs.views import pipeline_id_of

BEGINNING = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class ActionEntry:
    action_id: int
    at: datetime
    actor: str
    actor_kind: str
    host: str
    command: str
    arguments: dict[str, Any]
    outcome: str
    exit_code: int | None
    pipeline_code: str | None
    run_id: int | None
    task_code: str | None


@dataclass(frozen=True)
class MetadataChangeEntry:
    change_id: int
    at: datetime
    actor: str
    actor_kind: str
    table_name: str
    row_key: str
    operation: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    migration: str | None


@dataclass(frozen=True)
class Audit:
    schema: ClassVar[str] = "etl-craft/audit/1"
    project_code: str
    pipeline_code: str | None
    since: date | None
    actions: tuple[ActionEntry, ...]
    metadata_changes: tuple[MetadataChangeEntry, ...]


def audit(
    ctx: OperationContext, pipeline_code: str | None, since: date | None, limit: int = 500
) -> Audit:
    start = BEGINNING if since is None else datetime.combine(since, time(), tzinfo=UTC)
    with ctx.engine.read() as conn:
        project_id = active_project_id(conn, ctx.project_code)
        if project_id is None:
            raise NotFoundError(
                f"the Engine DB has no active project {ctx.project_code}; create it with "
                "etl-craft init-db, or check Orchestration.project in craft-connector.yml"
            )
        pipeline_id = None
        if pipeline_code is not None:
            pipeline_id = pipeline_id_of(conn, ctx.project_code, pipeline_code)
        actions = audit_actions(
            conn,
            project_id=project_id,
            pipeline_id=pipeline_id,
            since=start,
            limit=limit,
        )
        changes = audit_metadata_changes(conn, pipeline_id=pipeline_id, since=start, limit=limit)
    names = sensitive_names(ctx.connector)
    return Audit(
        project_code=ctx.project_code,
        pipeline_code=pipeline_code,
        since=since,
        actions=tuple(_action(row) for row in actions),
        metadata_changes=tuple(change_entry(row, names) for row in changes),
    )


def _action(row: Any) -> ActionEntry:
    return ActionEntry(
        action_id=int(row["action_id"]),
        at=_instant(row["started_at"]),
        actor=str(row["actor"]),
        actor_kind=str(row["actor_kind"]),
        host=str(row["host"]),
        command=str(row["command"]),
        arguments=_json(row["arguments"]) or {},
        outcome=str(row["outcome"]),
        exit_code=row["exit_code"],
        pipeline_code=row["pipeline_code"],
        run_id=row["pipeline_run_id"],
        task_code=row["task_code"],
    )


def change_entry(row: Any, names: SensitiveNames) -> MetadataChangeEntry:
    """One AUD_METADATA_CHANGES row, with secret-looking parameter values masked."""
    return MetadataChangeEntry(
        change_id=int(row["change_id"]),
        at=_instant(row["changed_at"]),
        actor=str(row["actor"]),
        actor_kind=str(row["actor_kind"]),
        table_name=str(row["table_name"]),
        row_key=str(row["row_key"]),
        operation=str(row["operation"]),
        before=mask_parameter_row(_json(row["before_json"]), names),
        after=mask_parameter_row(_json(row["after_json"]), names),
        migration=row["migration"],
    )


def mask_parameter_row(row: dict[str, Any] | None, names: SensitiveNames) -> dict[str, Any] | None:
    """A parameter row with its value masked when the parameter's name looks secret (S7.C)."""
    if row is None or "parameter_name" not in row or "parameter_value" not in row:
        return row
    value = mask_parameter(str(row["parameter_name"]), row["parameter_value"], names)
    return {**row, "parameter_value": value}


def _instant(value: Any) -> datetime:
    found = as_utc(value)
    assert found is not None
    return found


def _json(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    loaded = json.loads(value) if isinstance(value, str) else value
    return dict(loaded)
