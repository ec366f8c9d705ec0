"""Status changes of attempts; each also rewrites its task run's summary in the same transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import RowMapping

from etl_craft.core.actor import Actor
from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus, SlotKind
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.transitions._apply import apply, notify
from etl_craft.enginedb.transitions.table import Entity


@dataclass(frozen=True)
class QueuedAttempt:
    attempt_id: int
    task_run_id: int
    attempt_number: int


@dataclass(frozen=True)
class AttemptOutcome:
    """What an owner records when an attempt ends."""

    status: AttemptStatus
    counts: Counts = field(default_factory=Counts)
    error_message: str | None = None
    task_log: str | None = None
    exit_code: int | None = None
    retryable: bool = True
    source: str = "CHILD"

    def __post_init__(self) -> None:
        if self.status not in (AttemptStatus.SUCCESS, AttemptStatus.FAILED):
            raise ValueError(f"an attempt outcome is SUCCESS or FAILED, not {self.status.value}")


def queue_attempt(
    conn: EngineConnection,
    task_run_id: int,
    actor: Actor,
    *,
    slot_kind: SlotKind,
    pool: str = "default",
    priority: int = 0,
    not_before: datetime | None = None,
    message: str | None = None,
) -> QueuedAttempt:
    """Queue the next attempt of a task run that has none live; ``message`` says why it runs."""
    row = conn.one(
        "transition_queue_attempt",
        task_run_id=task_run_id,
        pool=pool,
        slot_kind=slot_kind.value,
        priority=priority,
        not_before=not_before,
        actor=actor.name,
        actor_kind=actor.kind.value,
    )
    if row is None:
        live = conn.one("live_attempts_of_task_run", task_run_id=task_run_id)
        found = f"attempt {live['attempt_id']} is {live['status']}" if live else "the insert failed"
        raise StaleTransitionError(
            f"queue attempt refused for task run {task_run_id}: expected no live attempt; {found}. "
            "A task run has at most one live attempt: wait for it or cancel it"
        )
    attempt = QueuedAttempt(int(row["attempt_id"]), task_run_id, int(row["attempt_number"]))
    notify(conn, Entity.ATTEMPT, attempt.attempt_id, AttemptStatus.QUEUED.value)
    _summarise(conn, task_run_id, attempt.attempt_id, AttemptStatus.QUEUED, actor, message=message)
    return attempt


def claim_attempt(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, owner_id: str, lease_seconds: float
) -> None:
    _attempt(
        conn, "claim_attempt", attempt_id, actor, owner_id=owner_id, lease_seconds=lease_seconds
    )


def claim_next_attempt(
    conn: EngineConnection,
    actor: Actor,
    *,
    pool: str,
    free_kinds: list[SlotKind],
    owner_id: str,
    lease_seconds: float,
) -> int | None:
    """Claim the next due attempt of ``pool`` (PostgreSQL queue); None when there is none."""
    row = conn.one(
        "transition_claim_next_attempt",
        pool=pool,
        free_kinds=[kind.value for kind in free_kinds],
        owner_id=owner_id,
        lease_seconds=lease_seconds,
    )
    if row is None:
        return None
    attempt_id = int(row["attempt_id"])
    notify(conn, Entity.ATTEMPT, attempt_id, AttemptStatus.CLAIMED.value)
    _summarise(conn, int(row["task_run_id"]), attempt_id, AttemptStatus.CLAIMED, actor)
    return attempt_id


def start_attempt(
    conn: EngineConnection,
    attempt_id: int,
    actor: Actor,
    *,
    owner_id: str,
    host: str,
    pid: int,
    process_start: str,
    log_path: str | None,
) -> None:
    row = _attempt(
        conn,
        "start_attempt",
        attempt_id,
        actor,
        owner_id=owner_id,
        host=host,
        pid=pid,
        process_start=process_start,
        log_path=log_path,
    )
    _summarise(conn, int(row["task_run_id"]), attempt_id, AttemptStatus.RUNNING, actor)


def finish_attempt(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, owner_id: str, outcome: AttemptOutcome
) -> None:
    """Record the attempt's outcome and its task run's summary in the caller's transaction."""
    params: dict[str, Any] = {
        "status": outcome.status.value,
        "exit_code": outcome.exit_code,
        "retryable": "Y" if outcome.retryable else "N",
        "error_message": outcome.error_message,
        "task_log": outcome.task_log,
        "outcome_source": outcome.source,
        **outcome.counts.as_params(),
    }
    row = _attempt(conn, "finish_attempt", attempt_id, actor, owner_id=owner_id, **params)
    _summarise(
        conn,
        int(row["task_run_id"]),
        attempt_id,
        outcome.status,
        actor,
        counts=outcome.counts,
        error_message=outcome.error_message,
        task_log=outcome.task_log,
    )


def time_out_attempt(
    conn: EngineConnection,
    attempt_id: int,
    actor: Actor,
    *,
    owner_id: str,
    error_message: str,
    task_log: str | None = None,
    exit_code: int | None = None,
) -> None:
    row = _attempt(
        conn,
        "time_out_attempt",
        attempt_id,
        actor,
        owner_id=owner_id,
        error_message=error_message,
        task_log=task_log,
        exit_code=exit_code,
    )
    _summarise(
        conn,
        int(row["task_run_id"]),
        attempt_id,
        AttemptStatus.TIMED_OUT,
        actor,
        error_message=error_message,
        task_log=task_log,
    )


def cancel_queued_attempt(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, message: str
) -> None:
    row = _attempt(conn, "cancel_queued_attempt", attempt_id, actor, error_message=message)
    _summarise(
        conn,
        int(row["task_run_id"]),
        attempt_id,
        AttemptStatus.CANCELLED,
        actor,
        error_message=message,
    )


def cancel_owned_attempt(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, owner_id: str, message: str
) -> None:
    row = _attempt(
        conn, "cancel_owned_attempt", attempt_id, actor, owner_id=owner_id, error_message=message
    )
    _summarise(
        conn,
        int(row["task_run_id"]),
        attempt_id,
        AttemptStatus.CANCELLED,
        actor,
        error_message=message,
    )


def request_cancel(conn: EngineConnection, attempt_id: int, actor: Actor) -> None:
    """Ask the owner of a live attempt to stop it; the status stays the owner's to change."""
    _attempt(conn, "request_cancel", attempt_id, actor)


def lose_attempt(conn: EngineConnection, attempt_id: int, actor: Actor, *, message: str) -> None:
    row = _attempt(conn, "lose_attempt", attempt_id, actor, error_message=message)
    _summarise(
        conn, int(row["task_run_id"]), attempt_id, AttemptStatus.LOST, actor, error_message=message
    )


def recover_attempt(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, counts: Counts, message: str
) -> None:
    """Settle an attempt SUCCESS from the warehouse ledger after its owner stopped renewing."""
    params: dict[str, Any] = {"error_message": message, **counts.as_params()}
    row = _attempt(conn, "recover_attempt", attempt_id, actor, **params)
    _summarise(
        conn,
        int(row["task_run_id"]),
        attempt_id,
        AttemptStatus.SUCCESS,
        actor,
        counts=counts,
        message=message,
    )


def renew_attempt_lease(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, owner_id: str, lease_seconds: float
) -> None:
    _attempt(
        conn,
        "renew_attempt_lease",
        attempt_id,
        actor,
        owner_id=owner_id,
        lease_seconds=lease_seconds,
    )


def _attempt(
    conn: EngineConnection,
    transition: str,
    attempt_id: int,
    actor: Actor,
    *,
    owner_id: str | None = None,
    **params: Any,
) -> RowMapping:
    return apply(conn, Entity.ATTEMPT, transition, attempt_id, actor, owner_id=owner_id, **params)


def _summarise(
    conn: EngineConnection,
    task_run_id: int,
    attempt_id: int,
    status: AttemptStatus,
    actor: Actor,
    *,
    counts: Counts | None = None,
    error_message: str | None = None,
    task_log: str | None = None,
    message: str | None = None,
) -> None:
    summary = status.summary
    conn.guarded(
        "transition_summarise_task_run",
        refusal=f"task run {task_run_id} of attempt {attempt_id} is missing",
        task_run_id=task_run_id,
        attempt_id=attempt_id,
        summary=summary.value,
        is_live=not status.terminal,
        error_message=error_message,
        task_log=task_log,
        message=message,
        actor=actor.name,
        actor_kind=actor.kind.value,
        **(counts or Counts()).as_params(),
    )
    notify(conn, Entity.TASK_RUN, task_run_id, summary.value)
