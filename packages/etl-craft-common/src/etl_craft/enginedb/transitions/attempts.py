"""Status changes of attempts; each also rewrites its task run's summary in the same transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from etl_craft.core.actor import Actor
from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus, SlotKind
from etl_craft.core.errors import StaleTransitionError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, Row
from etl_craft.enginedb.transitions._apply import apply, apply_many, notify
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


@dataclass(frozen=True)
class ClaimedAttempt:
    attempt_id: int
    task_run_id: int
    slot_kind: SlotKind
    waited: float  # seconds from its being due (queued, or its retry delay over) to its claim


@dataclass(frozen=True)
class AttemptStart:
    """A claimed attempt's task process, started by its owner."""

    attempt_id: int
    task_run_id: int
    owner_id: str
    host: str
    pid: int
    process_start: str
    log_path: str | None


@dataclass(frozen=True)
class AttemptEnd:
    """An outcome its owner records for an attempt of a task run."""

    attempt_id: int
    task_run_id: int
    owner_id: str
    outcome: AttemptOutcome


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
    _summarise(
        conn,
        [_summary(task_run_id, attempt.attempt_id, AttemptStatus.QUEUED, actor, message=message)],
    )
    return attempt


def claim_attempt(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, owner_id: str, lease_seconds: float
) -> None:
    _attempt(
        conn, "claim_attempt", attempt_id, actor, owner_id=owner_id, lease_seconds=lease_seconds
    )


def claim_attempts(
    conn: EngineConnection,
    actor: Actor,
    *,
    pool: str,
    free: Mapping[SlotKind, int],
    owner_id: str,
    lease_seconds: float,
    summarise: bool = True,
) -> list[ClaimedAttempt]:
    """Claim up to ``free[kind]`` due attempts of ``pool`` of each slot kind (PostgreSQL queue),
    one statement a kind, and summarise their task runs in one batch; not when the caller ends
    the transaction with each attempt started (start_attempts) or ended, which summarise them."""
    claimed: list[ClaimedAttempt] = []
    for kind, limit in free.items():
        if limit <= 0:
            continue
        rows = conn.all(
            "transition_claim_attempts",
            pool=pool,
            slot_kind=kind.value,
            limit=limit,
            owner_id=owner_id,
            lease_seconds=lease_seconds,
        )
        claimed += [_claimed(row) for row in rows]
    for attempt in claimed:
        notify(conn, Entity.ATTEMPT, attempt.attempt_id, AttemptStatus.CLAIMED.value)
    if not summarise:
        return claimed
    _summarise(
        conn,
        [
            _summary(attempt.task_run_id, attempt.attempt_id, AttemptStatus.CLAIMED, actor)
            for attempt in claimed
        ],
    )
    return claimed


def _claimed(row: Row) -> ClaimedAttempt:
    due, claimed = as_utc(row["due_at"]), as_utc(row["claimed_at"])
    waited = 0.0 if due is None or claimed is None else (claimed - due).total_seconds()
    kind = SlotKind(row["slot_kind"])
    return ClaimedAttempt(int(row["attempt_id"]), int(row["task_run_id"]), kind, max(0.0, waited))


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
    _summarise(conn, [_summary(int(row["task_run_id"]), attempt_id, AttemptStatus.RUNNING, actor)])


def start_attempts(conn: EngineConnection, actor: Actor, starts: Sequence[AttemptStart]) -> None:
    """Record several claimed attempts RUNNING with their processes, in one batch."""
    rows = [
        {
            "attempt_id": start.attempt_id,
            "owner_id": start.owner_id,
            "host": start.host,
            "pid": start.pid,
            "process_start": start.process_start,
            "log_path": start.log_path,
        }
        for start in starts
    ]
    running = AttemptStatus.RUNNING
    apply_many(
        conn, Entity.ATTEMPT, "start_attempt", rows, actor, key="attempt_id", target=running.value
    )
    _summarise(
        conn, [_summary(start.task_run_id, start.attempt_id, running, actor) for start in starts]
    )


def finish_attempt(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, owner_id: str, outcome: AttemptOutcome
) -> None:
    """Record the attempt's outcome and its task run's summary in the caller's transaction."""
    params = _outcome_params(outcome)
    row = _attempt(conn, "finish_attempt", attempt_id, actor, owner_id=owner_id, **params)
    _summarise(conn, [_outcome_summary(int(row["task_run_id"]), attempt_id, outcome, actor)])


def finish_attempts(conn: EngineConnection, actor: Actor, ends: Sequence[AttemptEnd]) -> None:
    """Record the outcomes of several attempts and their task runs' summaries in one batch;
    StaleTransitionError when one of them is no longer its owner's to record (the caller's
    rollback then undoes them all, and it may record them one by one)."""
    rows = [
        {"attempt_id": end.attempt_id, "owner_id": end.owner_id, **_outcome_params(end.outcome)}
        for end in ends
    ]
    for status in {end.outcome.status for end in ends}:
        chosen = [row for row, end in zip(rows, ends, strict=True) if end.outcome.status is status]
        apply_many(
            conn,
            Entity.ATTEMPT,
            "finish_attempt",
            chosen,
            actor,
            key="attempt_id",
            target=status.value,
        )
    summaries = [_outcome_summary(e.task_run_id, e.attempt_id, e.outcome, actor) for e in ends]
    _summarise(conn, summaries)


def _outcome_params(outcome: AttemptOutcome) -> dict[str, Any]:
    return {
        "status": outcome.status.value,
        "exit_code": outcome.exit_code,
        "retryable": "Y" if outcome.retryable else "N",
        "error_message": outcome.error_message,
        "task_log": outcome.task_log,
        "outcome_source": outcome.source,
        **outcome.counts.as_params(),
    }


def _outcome_summary(
    task_run_id: int, attempt_id: int, outcome: AttemptOutcome, actor: Actor
) -> dict[str, Any]:
    return _summary(
        task_run_id,
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
        [
            _summary(
                int(row["task_run_id"]),
                attempt_id,
                AttemptStatus.TIMED_OUT,
                actor,
                error_message=error_message,
                task_log=task_log,
            )
        ],
    )


def cancel_queued_attempt(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, message: str
) -> None:
    row = _attempt(conn, "cancel_queued_attempt", attempt_id, actor, error_message=message)
    _summarise(
        conn,
        [
            _summary(
                int(row["task_run_id"]),
                attempt_id,
                AttemptStatus.CANCELLED,
                actor,
                error_message=message,
            )
        ],
    )


def cancel_owned_attempt(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, owner_id: str, message: str
) -> None:
    row = _attempt(
        conn, "cancel_owned_attempt", attempt_id, actor, owner_id=owner_id, error_message=message
    )
    _summarise(
        conn,
        [
            _summary(
                int(row["task_run_id"]),
                attempt_id,
                AttemptStatus.CANCELLED,
                actor,
                error_message=message,
            )
        ],
    )


def request_cancel(conn: EngineConnection, attempt_id: int, actor: Actor) -> None:
    """Ask the owner of a live attempt to stop it; the status stays the owner's to change."""
    _attempt(conn, "request_cancel", attempt_id, actor)


def lose_attempt(conn: EngineConnection, attempt_id: int, actor: Actor, *, message: str) -> None:
    row = _attempt(conn, "lose_attempt", attempt_id, actor, error_message=message)
    _summarise(
        conn,
        [
            _summary(
                int(row["task_run_id"]),
                attempt_id,
                AttemptStatus.LOST,
                actor,
                error_message=message,
            )
        ],
    )


def recover_attempt(
    conn: EngineConnection, attempt_id: int, actor: Actor, *, counts: Counts, message: str
) -> None:
    """Settle an attempt SUCCESS from the warehouse ledger after its owner stopped renewing."""
    params: dict[str, Any] = {"error_message": message, **counts.as_params()}
    row = _attempt(conn, "recover_attempt", attempt_id, actor, **params)
    _summarise(
        conn,
        [
            _summary(
                int(row["task_run_id"]),
                attempt_id,
                AttemptStatus.SUCCESS,
                actor,
                counts=counts,
                message=message,
            )
        ],
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
) -> Row:
    return apply(conn, Entity.ATTEMPT, transition, attempt_id, actor, owner_id=owner_id, **params)


def _summary(
    task_run_id: int,
    attempt_id: int,
    status: AttemptStatus,
    actor: Actor,
    *,
    counts: Counts | None = None,
    error_message: str | None = None,
    task_log: str | None = None,
    message: str | None = None,
) -> dict[str, Any]:
    """The parameters that make a task run the summary of its attempt in ``status``."""
    return {
        "task_run_id": task_run_id,
        "attempt_id": attempt_id,
        "summary": status.summary.value,
        "is_live": not status.terminal,
        "error_message": error_message,
        "task_log": task_log,
        "message": message,
        "actor": actor.name,
        "actor_kind": actor.kind.value,
        **(counts or Counts()).as_params(),
    }


def _summarise(conn: EngineConnection, summaries: list[dict[str, Any]]) -> None:
    """Make each task run the summary of its latest attempt, in one batch."""
    changed = conn.run_many("transition_summarise_task_run", summaries)
    if changed != len(summaries):
        pairs = [f"{row['task_run_id']} (attempt {row['attempt_id']})" for row in summaries]
        raise StaleTransitionError(f"a task run is missing among task runs {', '.join(pairs)}")
    for row in summaries:
        notify(conn, Entity.TASK_RUN, row["task_run_id"], row["summary"])
