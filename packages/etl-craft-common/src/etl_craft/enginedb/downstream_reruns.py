"""AUD_DOWNSTREAM_RERUNS: queued reruns with downstream that etl-craft server carries on."""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.core.actor import Actor, ActorKind
from etl_craft.enginedb.connection import EngineConnection


@dataclass(frozen=True)
class PendingDownstreamRerun:
    task_id: int
    since_attempt_id: int  # a task run with a later attempt has run again since the request
    reason: str
    actor: Actor


def record_downstream_rerun(
    conn: EngineConnection, actor: Actor, *, run_id: int, task_id: int, reason: str
) -> None:
    """Record the request before its first stage's attempt is queued (see SINCE_ATTEMPT_ID)."""
    conn.run(
        "record_downstream_rerun",
        run_id=run_id,
        task_id=task_id,
        reason=reason,
        actor=actor.name,
        actor_kind=actor.kind.value,
    )


def settle_downstream_reruns(conn: EngineConnection, run_id: int) -> None:
    conn.run("settle_downstream_reruns", run_id=run_id)


def pending_downstream_rerun(conn: EngineConnection, run_id: int) -> PendingDownstreamRerun | None:
    row = conn.one("pending_downstream_rerun", run_id=run_id)
    if row is None:
        return None
    return PendingDownstreamRerun(
        task_id=int(row["task_id"]),
        since_attempt_id=int(row["since_attempt_id"]),
        reason=row["reason"],
        actor=Actor(row["requested_by"], ActorKind(row["requested_by_kind"])),
    )


def runs_with_pending_downstream_reruns(conn: EngineConnection) -> list[int]:
    return [int(row["pipeline_run_id"]) for row in conn.all("runs_with_pending_downstream_reruns")]


def task_ids_run_since(conn: EngineConnection, run_id: int, since_attempt_id: int) -> set[int]:
    rows = conn.all("task_ids_run_since", run_id=run_id, since=since_attempt_id)
    return {int(row["task_id"]) for row in rows}
