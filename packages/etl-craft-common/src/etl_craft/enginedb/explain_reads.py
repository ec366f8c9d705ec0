"""Reads behind `explain`: one task run's attempts, the gate waits and decisions of a task, and
for `explain --at` a run's attempts, interventions and pauses with the moment of each step."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.enums import AttemptStatus, TaskRunStatus
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineReads


@dataclass(frozen=True)
class AttemptRow:
    number: int
    status: AttemptStatus
    not_before: datetime | None = None
    ended_at: datetime | None = None
    retryable: bool | None = None
    error_message: str | None = None
    queued_at: datetime | None = None


@dataclass(frozen=True)
class GateWaitRow:
    """A stored wait; ``pipeline_gate`` when it holds back the whole run, not only the task."""

    pipeline_gate: bool
    first_check_at: datetime
    next_check_at: datetime
    looks: int
    wait_until: datetime
    last_reason: str | None
    resolved_at: datetime | None


@dataclass(frozen=True)
class GateDecisionRow:
    """A judged dependency; one of the pipeline's has no task dependency and no upstream task."""

    task_dependency_id: int | None
    upstream_code: str | None
    upstream_pipeline: str
    result: str  # SATISFIED, UNSATISFIED or BYPASSED
    reason: str
    decided_at: datetime
    decided_by: str
    upstream_status: TaskRunStatus | None = None  # of the upstream task run it selected
    upstream_rows: int | None = None


def _instant(value: datetime | str) -> datetime:
    found = as_utc(value)
    assert found is not None
    return found


def read_attempts(conn: EngineReads, task_run_id: int) -> tuple[AttemptRow, ...]:
    return tuple(
        AttemptRow(
            number=int(row["attempt_number"]),
            status=AttemptStatus(row["status"]),
            not_before=as_utc(row["not_before"]),
            ended_at=as_utc(row["ended_at"]),
            retryable=None if row["retryable"] is None else row["retryable"] == "Y",
            error_message=row["error_message"],
            queued_at=as_utc(row["queued_at"]),
        )
        for row in conn.all("explain_task_attempts", task_run_id=task_run_id)
    )


def read_gate_waits(conn: EngineReads, run_id: int, task_id: int) -> tuple[GateWaitRow, ...]:
    return tuple(
        GateWaitRow(
            pipeline_gate=row["task_id"] is None,
            first_check_at=_instant(row["first_check_at"]),
            next_check_at=_instant(row["next_check_at"]),
            looks=int(row["looks"]),
            wait_until=_instant(row["wait_until"]),
            last_reason=row["last_reason"],
            resolved_at=as_utc(row["resolved_at"]),
        )
        for row in conn.all("explain_gate_waits", pipeline_run_id=run_id, task_id=task_id)
    )


def read_gate_decisions(
    conn: EngineReads, run_id: int, task_id: int
) -> tuple[GateDecisionRow, ...]:
    return tuple(
        GateDecisionRow(
            task_dependency_id=row["task_dependency_id"],
            upstream_code=row["upstream_task_code"],
            upstream_pipeline=str(row["upstream_pipeline_code"]),
            result=str(row["result"]),
            reason=str(row["reason"]),
            decided_at=_instant(row["decided_at"]),
            decided_by=str(row["decided_by"]),
            upstream_status=TaskRunStatus(row["upstream_status"])
            if row["upstream_status"]
            else None,
            upstream_rows=row["upstream_rows"],
        )
        for row in conn.all("explain_gate_decisions", pipeline_run_id=run_id, task_id=task_id)
    )


@dataclass(frozen=True)
class AttemptHistoryRow:
    """One attempt as it ended (or stands now), with the moment of each step it took."""

    task_run_id: int
    attempt_id: int
    number: int
    status: AttemptStatus
    not_before: datetime | None
    queued_at: datetime
    claimed_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    owner_id: str | None
    retryable: bool | None
    error_message: str | None
    rows_written: int | None
    cancel_requested_at: datetime | None


@dataclass(frozen=True)
class InterventionRow:
    """An operator's change to a run (``task_run_id`` None) or to one of its task runs."""

    task_run_id: int | None
    kind: str  # MARK, CANCEL, REOPEN, RERUN, SKIP, FORCE, IGNORE_DEPENDENCIES, BACKFILL
    from_status: str | None
    to_status: str | None
    rows_written: int | None
    reason: str
    requested_at: datetime
    requested_by: str


@dataclass(frozen=True)
class PauseSpan:
    paused_at: datetime
    resumed_at: datetime | None


def read_attempt_history(conn: EngineReads, run_id: int) -> tuple[AttemptHistoryRow, ...]:
    return tuple(
        AttemptHistoryRow(
            task_run_id=int(row["task_run_id"]),
            attempt_id=int(row["attempt_id"]),
            number=int(row["attempt_number"]),
            status=AttemptStatus(row["status"]),
            not_before=as_utc(row["not_before"]),
            queued_at=_instant(row["queued_at"]),
            claimed_at=as_utc(row["claimed_at"]),
            started_at=as_utc(row["started_at"]),
            ended_at=as_utc(row["ended_at"]),
            owner_id=row["owner_id"],
            retryable=None if row["retryable"] is None else row["retryable"] == "Y",
            error_message=row["error_message"],
            rows_written=row["rows_written"],
            cancel_requested_at=as_utc(row["cancel_requested_at"]),
        )
        for row in conn.all("explain_run_attempt_history", pipeline_run_id=run_id)
    )


def read_interventions(conn: EngineReads, run_id: int) -> tuple[InterventionRow, ...]:
    return tuple(
        InterventionRow(
            task_run_id=row["task_run_id"],
            kind=str(row["kind"]),
            from_status=row["from_status"],
            to_status=row["to_status"],
            rows_written=row["rows_written"],
            reason=str(row["reason"]),
            requested_at=_instant(row["requested_at"]),
            requested_by=str(row["requested_by"]),
        )
        for row in conn.all("explain_run_interventions", pipeline_run_id=run_id)
    )


def read_pauses(conn: EngineReads, run_id: int) -> tuple[PauseSpan, ...]:
    return tuple(
        PauseSpan(_instant(row["paused_at"]), as_utc(row["resumed_at"]))
        for row in conn.all("explain_run_pauses", pipeline_run_id=run_id)
    )
