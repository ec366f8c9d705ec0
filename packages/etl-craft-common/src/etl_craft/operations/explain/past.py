"""`explain --at`: the rows `explain` judges, as they stood at a past moment.

The Engine DB keeps each task run and run as it stands now, but every step that changed them
is recorded with its moment: an attempt's queue, claim, start and end, an operator's
intervention, a gate's wait and decision, a pause. The rows of a past moment are rebuilt from
the steps taken at or before it, and judged by the same `explain` as the present, so the two
never word the same state differently.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from etl_craft.core.enums import AttemptStatus, RunStatus, TaskRunStatus
from etl_craft.core.errors import UsageError
from etl_craft.core.time import as_utc, utc_now
from etl_craft.enginedb.connection import EngineReads
from etl_craft.enginedb.controls import RunControls
from etl_craft.enginedb.explain_reads import (
    AttemptHistoryRow,
    AttemptRow,
    GateWaitRow,
    InterventionRow,
    PauseSpan,
    read_attempt_history,
    read_pauses,
)
from etl_craft.enginedb.runs import RunRow, TaskRunRow
from etl_craft.operations.explain.snapshot import ExplainRecords, read_explain_records

MOMENT_FORMAT = "%Y-%m-%d %H:%M:%S UTC"


@dataclass(frozen=True)
class RunHistory:
    attempts: tuple[AttemptHistoryRow, ...]
    interventions: tuple[InterventionRow, ...]
    pauses: tuple[PauseSpan, ...]


def read_explain_records_at(
    conn: EngineReads, run_id: int, task_code: str, at: datetime, *, default_retries: int = 0
) -> ExplainRecords:
    records = read_explain_records(conn, run_id, task_code, default_retries=default_retries)
    history = RunHistory(
        read_attempt_history(conn, run_id), records.interventions, read_pauses(conn, run_id)
    )
    return records_at(records, history, at)


def records_at(records: ExplainRecords, history: RunHistory, at: datetime) -> ExplainRecords:
    """The records as they stood at ``at``: only what was recorded at or before it."""
    run = records.run
    if run.queued_at is None or at < run.queued_at:
        created = f"{run.queued_at:{MOMENT_FORMAT}}" if run.queued_at else "at an unknown moment"
        raise UsageError(
            f"--at {at:{MOMENT_FORMAT}} is before run {run.pipeline_run_id} of "
            f"{run.pipeline_code} existed (it was queued {created}); name a moment at or after "
            "it was queued"
        )
    task_runs = {
        task_id: past
        for task_id, row in records.task_runs.items()
        if (past := _task_run_at(row, history, at)) is not None
    }
    own = records.task_runs.get(records.task.task_id)
    return replace(
        records,
        run=replace(run, status=_run_status_at(run, records, history, at)),
        controls=_controls_at(history, at),
        task_runs=task_runs,
        attempts=tuple(_attempt_at(a, at) for a in _attempts_of(history, own, at)),
        gate_waits=tuple(_wait_at(w, at) for w in records.gate_waits if w.first_check_at <= at),
        gate_decisions=tuple(d for d in records.gate_decisions if d.decided_at <= at),
        interventions=tuple(i for i in history.interventions if i.requested_at <= at),
    )


def _attempts_of(
    history: RunHistory, row: TaskRunRow | None, at: datetime
) -> list[AttemptHistoryRow]:
    if row is None:
        return []
    return [a for a in history.attempts if a.task_run_id == row.task_run_id and a.queued_at <= at]


def _ended_by(a: AttemptHistoryRow, at: datetime) -> bool:
    return a.ended_at is not None and a.ended_at <= at


def _status_at(a: AttemptHistoryRow, at: datetime) -> AttemptStatus:
    if _ended_by(a, at):
        return a.status
    if a.started_at is not None and a.started_at <= at:
        return AttemptStatus.RUNNING
    if a.claimed_at is not None and a.claimed_at <= at:
        return AttemptStatus.CLAIMED
    return AttemptStatus.QUEUED


def _attempt_at(a: AttemptHistoryRow, at: datetime) -> AttemptRow:
    if _ended_by(a, at):
        return AttemptRow(
            a.number, a.status, a.not_before, a.ended_at, a.retryable, a.error_message, a.queued_at
        )
    return AttemptRow(a.number, _status_at(a, at), a.not_before, queued_at=a.queued_at)


def _steps(a: AttemptHistoryRow) -> tuple[datetime | None, ...]:
    return (a.queued_at, a.claimed_at, a.started_at, a.ended_at, a.cancel_requested_at)


def _task_run_at(row: TaskRunRow, history: RunHistory, at: datetime) -> TaskRunRow | None:
    if row.start_date is None or at < row.start_date:
        return None
    attempts = [a for a in history.attempts if a.task_run_id == row.task_run_id]
    marks = [
        i for i in history.interventions if i.task_run_id == row.task_run_id and i.kind == "MARK"
    ]
    later = [*(m for a in attempts for m in _steps(a)), *(i.requested_at for i in marks)]
    if all(moment <= at for moment in _known(later)):
        return row  # nothing changed it since: the row as it stands is the row as it stood
    seen = [a for a in attempts if a.queued_at <= at]
    passed = [i for i in marks if i.requested_at <= at]
    mark = passed[-1] if passed else None
    if seen and (mark is None or seen[-1].queued_at > mark.requested_at):
        return _from_attempt(row, seen[-1], at)
    # The scheduler creates a task run and queues its first attempt in one transaction, so a
    # task run seen without an attempt had been skipped (a rerun or a mark queued one later).
    base = _from_attempt(row, seen[-1], at) if seen else _skipped(row)
    if mark is None:
        return base
    status = TaskRunStatus(mark.to_status or base.status)
    return replace(base, status=status, rows_written=mark.rows_written, end_date=mark.requested_at)


def _skipped(row: TaskRunRow) -> TaskRunRow:
    return replace(
        row,
        status=TaskRunStatus.SKIPPED,
        rows_written=None,
        attempt_count=0,
        attempt_id=None,
        attempt_status=None,
        retryable=False,
        attempt_ended_at=None,
        not_before=None,
        owner_id=None,
        cancel_requested_at=None,
        message=None,
        error_message=None,
        end_date=row.start_date,
    )


def _from_attempt(row: TaskRunRow, latest: AttemptHistoryRow, at: datetime) -> TaskRunRow:
    status, ended = _status_at(latest, at), _ended_by(latest, at)
    claimed = latest.claimed_at is not None and latest.claimed_at <= at
    cancel = latest.cancel_requested_at
    return replace(
        row,
        status=status.summary,
        rows_written=latest.rows_written if ended else None,
        attempt_count=latest.number,
        attempt_id=latest.attempt_id,
        attempt_status=status,
        retryable=bool(latest.retryable) if ended else False,
        attempt_ended_at=latest.ended_at if ended else None,
        not_before=latest.not_before,
        owner_id=latest.owner_id if claimed else None,
        cancel_requested_at=cancel if cancel is not None and cancel <= at else None,
        message=None,
        error_message=latest.error_message if ended else None,
        end_date=latest.ended_at if ended else None,
    )


def _run_status_at(
    run: RunRow, records: ExplainRecords, history: RunHistory, at: datetime
) -> RunStatus:
    steps: list[tuple[datetime, RunStatus]] = []
    if run.queued_at is not None:
        steps.append((run.queued_at, RunStatus.QUEUED))
    if run.start_date is not None:
        steps.append((run.start_date, RunStatus.IN_PROGRESS))
    for change in (i for i in history.interventions if i.task_run_id is None):
        if change.kind not in ("REOPEN", "MARK") or change.to_status is None:
            continue
        if change.from_status and RunStatus(change.from_status).terminal:
            ended = _last_step_before(change.requested_at, run, records, history)
            steps.append((ended, RunStatus(change.from_status)))
        steps.append((change.requested_at, RunStatus(change.to_status)))
    if run.end_date is not None and run.status.terminal:
        steps.append((run.end_date, run.status))
    passed = [status for moment, status in sorted(steps, key=lambda s: s[0]) if moment <= at]
    return passed[-1] if passed else RunStatus.QUEUED


def _last_step_before(
    moment: datetime, run: RunRow, records: ExplainRecords, history: RunHistory
) -> datetime:
    """When a run that an operator reopened or marked had ended: that moment is not stored,
    but the run ended after the last step recorded before the change, so it reads as ended
    from that step on."""
    found = [
        *(a.ended_at for a in history.attempts),
        *(a.queued_at for a in history.attempts),
        *(row.start_date for row in records.task_runs.values()),
        *(d.decided_at for d in records.gate_decisions),
        *(i.requested_at for i in history.interventions),
        run.start_date,
        run.queued_at,
    ]
    return max((m for m in _known(found) if m < moment), default=moment)


def _known(moments: Iterable[datetime | None]) -> Iterable[datetime]:
    return (m for m in moments if m is not None)


def _controls_at(history: RunHistory, at: datetime) -> RunControls:
    controls = [
        i.kind
        for i in history.interventions
        if i.task_run_id is None and i.kind in ("CANCEL", "REOPEN") and i.requested_at <= at
    ]
    last = controls[-1] if controls else None
    paused = any(
        p.paused_at <= at and (p.resumed_at is None or p.resumed_at > at) for p in history.pauses
    )
    return RunControls(paused=paused, cancel_pending=last == "CANCEL", reopened=last == "REOPEN")


def _wait_at(wait: GateWaitRow, at: datetime) -> GateWaitRow:
    if wait.resolved_at is None or wait.resolved_at <= at:
        return wait
    # Resolving a wait overwrites its last reason with the decision's: what the gate had found
    # at ``at`` is no longer stored, so none is said.
    return replace(wait, resolved_at=None, last_reason=None)


def parse_moment(text: str) -> datetime:
    """An ISO 8601 moment; one without an offset is UTC, as every moment etl-craft stores and
    prints is."""
    try:
        moment = as_utc(datetime.fromisoformat(text.strip()))
    except ValueError:
        moment = None
    if moment is None:
        raise UsageError(
            f"--at {text!r} is not an ISO 8601 moment; expected a date and time such as "
            "2026-11-30T06:15:00+01:00, or 2026-11-30 05:15:00 read as UTC: correct the time"
        )
    return moment


def refuse_future(at: datetime) -> None:
    now = utc_now()
    if at > now:
        raise UsageError(
            f"--at {at:{MOMENT_FORMAT}} is later than now ({now:{MOMENT_FORMAT}}); explain "
            "the present without --at, or name a moment that has passed"
        )
