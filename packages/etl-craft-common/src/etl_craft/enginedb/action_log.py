"""AUD_ACTIONS: one row per state-changing command, recorded when it is requested."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Mapping
from datetime import datetime

from etl_craft.core.actor import Actor
from etl_craft.enginedb.connection import EngineConnection

MASK = "***"
# Arguments are kept for audit, which must never become a place where secrets leak.
_SENSITIVE = re.compile(r"password|secret|token|credential|api_?key", re.IGNORECASE)


def mask_arguments(arguments: Mapping[str, object]) -> dict[str, object]:
    return {
        key: MASK if _SENSITIVE.search(key) and value is not None else value
        for key, value in arguments.items()
    }


def record_action(
    conn: EngineConnection,
    actor: Actor,
    *,
    command: str,
    arguments: Mapping[str, object],
    started_at: datetime,
    project_code: str | None,
) -> int:
    """Record ``command`` as REQUESTED by ``actor``; returns its ACTION_ID."""
    row = conn.one(
        "record_action",
        started_at=started_at,
        actor=actor.name,
        actor_kind=actor.kind.value,
        host=socket.gethostname(),
        command=command,
        arguments=json.dumps(mask_arguments(arguments), sort_keys=True, default=str),
        project_code=project_code,
    )
    if row is None:
        raise AssertionError(f"recording the {command} action in AUD_ACTIONS returned no id")
    return int(row["action_id"])
