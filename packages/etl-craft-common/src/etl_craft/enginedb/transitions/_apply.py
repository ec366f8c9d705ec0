"""The one way a transition touches the Engine DB: a guarded statement, its row count checked."""

from __future__ import annotations

import json
from typing import Any, cast

from etl_craft.core.actor import Actor
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb.connection import EngineConnection, Row
from etl_craft.enginedb.transitions.table import BY_NAME, Entity

_STATE_QUERY = {
    Entity.RUN: ("run_state", "pipeline_run_id"),
    Entity.TASK_RUN: ("task_run_state", "task_run_id"),
    Entity.ATTEMPT: ("attempt_state", "attempt_id"),
    Entity.WORKER: ("worker_state", "worker_id"),
}


def apply(
    conn: EngineConnection,
    entity: Entity,
    transition: str,
    row_id: int | str,
    actor: Actor,
    *,
    owner_id: str | None = None,
    **params: Any,
) -> Row:
    """Run ``transition_<name>`` for one row; raise StaleTransitionError unless it changed it."""
    query, key = _STATE_QUERY[entity]
    values: dict[str, Any] = {key: row_id, "actor": actor.name, "actor_kind": actor.kind.value}
    if owner_id is not None:
        values["owner_id"] = owner_id
    values.update(params)
    rows = conn.run(f"transition_{transition}", **values).mappings().all()
    if len(rows) == 1:
        notify(conn, entity, row_id, str(rows[0]["status"]))
        return cast("Row", rows[0])
    found = conn.one(query, **{key: row_id})
    raise StaleTransitionError(_refusal(transition, entity, row_id, owner_id, found))


def apply_many(
    conn: EngineConnection,
    entity: Entity,
    transition: str,
    rows: list[dict[str, Any]],
    actor: Actor,
    *,
    key: str,
    target: str,
) -> None:
    """Run ``transition_<name>`` once per row, sent as one batch; raise StaleTransitionError
    (and let the caller's rollback undo them all) unless each changed its row, which it then
    records as ``target``."""
    values = [{**row, "actor": actor.name, "actor_kind": actor.kind.value} for row in rows]
    changed = conn.run_many(f"transition_{transition}", values)
    ids = [row[key] for row in rows]
    if changed != len(rows):
        rule = BY_NAME.get(transition)
        expected = rule.guard if rule else "each row to be live and owned by the caller"
        raise StaleTransitionError(
            f"{transition.replace('_', ' ')} refused for {entity.value}s {ids}: expected "
            f"{expected} for each; {changed} of {len(rows)} changed. Another process changed "
            "some first: read their current state with etl-craft status and act on that"
        )
    for row_id in ids:
        notify(conn, entity, row_id, target)


def notify(conn: EngineConnection, entity: Entity, row_id: int | str, status: str) -> None:
    conn.notify(json.dumps({"type": entity.value, "id": row_id, "status": status}))


def _refusal(
    transition: str,
    entity: Entity,
    row_id: int | str,
    owner_id: str | None,
    found: Row | None,
) -> str:
    rule = BY_NAME.get(transition)
    expected = rule.guard if rule else "the row to be live and owned by the caller"
    if owner_id is not None:
        expected += f" (owner {owner_id})"
    if found is None:
        seen = "no such row"
    else:
        seen = f"status {found['status']}"
        if found.get("owner_id") is not None or owner_id is not None:
            seen += f", owner {found.get('owner_id')}"
        if found.get("lease_expires_at") is not None:
            seen += f", lease until {found['lease_expires_at']}"
    return (
        f"{transition.replace('_', ' ')} refused for {entity.value} {row_id}: expected "
        f"{expected}; found {seen}. Another process changed it first: read its current "
        "state with etl-craft status and act on that"
    )
