"""Operator controls that are not status changes: scoped action records, pauses, audit reads."""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from etl_craft.core.actor import Actor
from etl_craft.core.time import as_utc
from etl_craft.enginedb.action_log import mask_arguments
from etl_craft.enginedb.connection import EngineConnection, Row

REQUESTED = "REQUESTED"
REFUSED = "REFUSED"


@dataclass(frozen=True)
class ActionScope:
    """What a command acted on, as far as it got before it was recorded or refused."""

    project_code: str
    pipeline_id: int | None = None
    run_id: int | None = None
    task_id: int | None = None


@dataclass(frozen=True)
class PauseRow:
    pause_id: int
    pipeline_id: int | None
    reason: str
    paused_at: datetime
    paused_by: str
    resumed_at: datetime | None
    resumed_by: str | None


def record_scoped_action(
    conn: EngineConnection,
    actor: Actor,
    *,
    command: str,
    arguments: Mapping[str, object],
    started_at: datetime,
    scope: ActionScope,
    outcome: str = REQUESTED,
    exit_code: int | None = None,
) -> int:
    """One AUD_ACTIONS row naming the pipeline, run and task the command acted on."""
    row = conn.one(
        "record_scoped_action",
        started_at=started_at,
        actor=actor.name,
        actor_kind=actor.kind.value,
        host=socket.gethostname(),
        command=command,
        arguments=json.dumps(mask_arguments(arguments), sort_keys=True, default=str),
        project_code=scope.project_code,
        pipeline_id=scope.pipeline_id,
        pipeline_run_id=scope.run_id,
        task_id=scope.task_id,
        outcome=outcome,
        exit_code=exit_code,
    )
    if row is None:
        raise AssertionError(f"recording the {command} action in AUD_ACTIONS returned no id")
    return int(row["action_id"])


def open_pause(
    conn: EngineConnection, actor: Actor, *, project_id: int, pipeline_id: int | None, reason: str
) -> int | None:
    """The new pause's id, or None when that pipeline (or project) has an open pause already."""
    row = conn.one(
        "open_pause",
        project_id=project_id,
        pipeline_id=pipeline_id,
        reason=reason,
        actor=actor.name,
        actor_kind=actor.kind.value,
    )
    return None if row is None else int(row["pause_id"])


def close_pause(
    conn: EngineConnection, actor: Actor, *, project_id: int, pipeline_id: int | None
) -> int | None:
    """The resumed pause's id, or None when nothing was paused at that scope."""
    row = conn.one(
        "close_pause",
        project_id=project_id,
        scope=pipeline_id or 0,
        actor=actor.name,
        actor_kind=actor.kind.value,
    )
    return None if row is None else int(row["pause_id"])


def read_open_pause(
    conn: EngineConnection, project_id: int, pipeline_id: int | None
) -> PauseRow | None:
    row = conn.one("open_pause_of", project_id=project_id, scope=pipeline_id or 0)
    return None if row is None else _pause(row)


def read_pause(conn: EngineConnection, pause_id: int) -> PauseRow:
    row = conn.one("pause_by_id", pause_id=pause_id)
    if row is None:
        raise AssertionError(f"pause {pause_id} vanished inside its own transaction")
    return _pause(row)


def operator_decisions(conn: EngineConnection, run_id: int) -> dict[int, str]:
    """Task run id -> SKIP or MARK, for the task runs of a run an operator settled."""
    return {
        int(row["task_run_id"]): str(row["kind"])
        for row in conn.all("operator_decided_task_runs", pipeline_run_id=run_id)
    }


def audit_actions(
    conn: EngineConnection, *, project_id: int, pipeline_id: int | None, since: datetime, limit: int
) -> list[Row]:
    return conn.all(
        "audit_actions", project_id=project_id, pipeline_id=pipeline_id, since=since, limit=limit
    )


def audit_metadata_changes(
    conn: EngineConnection, *, pipeline_id: int | None, since: datetime, limit: int
) -> list[Row]:
    return conn.all("audit_metadata_changes", pipeline_id=pipeline_id, since=since, limit=limit)


def metadata_changes_of_migration(conn: EngineConnection, migration: str) -> list[Row]:
    return conn.all("metadata_changes_of_migration", migration=migration)


def _pause(row: Row) -> PauseRow:
    paused_at = as_utc(row["paused_at"])
    assert paused_at is not None
    return PauseRow(
        pause_id=int(row["pause_id"]),
        pipeline_id=None if row["pipeline_id"] is None else int(row["pipeline_id"]),
        reason=str(row["reason"]),
        paused_at=paused_at,
        paused_by=str(row["paused_by"]),
        resumed_at=as_utc(row["resumed_at"]),
        resumed_by=_text(row["resumed_by"]),
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
