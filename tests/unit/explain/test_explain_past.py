"""explain --at: moments read from ISO 8601, and records rebuilt as they stood at a moment."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from types import MappingProxyType

import pytest

from etl_craft.core.enums import AttemptStatus, Handler, RunCondition, RunStatus, TaskRunStatus
from etl_craft.core.errors import UsageError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.controls import RunControls
from etl_craft.enginedb.explain_reads import AttemptHistoryRow, InterventionRow, PauseSpan
from etl_craft.enginedb.runs import PipelineShape, RunRow, TaskRow, TaskRunRow
from etl_craft.operations.explain.past import (
    RunHistory,
    parse_moment,
    records_at,
    refuse_future,
)
from etl_craft.operations.explain.snapshot import ExplainRecords, snapshot_of
from etl_craft.operations.explain.task import explain
from etl_craft.scheduling.shape import build_shape

T0 = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2026-11-30T06:15:00+01:00", datetime(2026, 11, 30, 5, 15, tzinfo=UTC)),
        ("2026-11-30T05:15:00Z", datetime(2026, 11, 30, 5, 15, tzinfo=UTC)),
        ("2026-11-30 05:15", datetime(2026, 11, 30, 5, 15, tzinfo=UTC)),
        (" 2026-11-30 05:15:00.250000 ", datetime(2026, 11, 30, 5, 15, 0, 250000, tzinfo=UTC)),
    ],
)
def test_a_moment_with_an_offset_is_converted_and_one_without_is_utc(
    text: str, moment: datetime
) -> None:
    assert parse_moment(text) == moment


def test_a_malformed_moment_is_refused_with_an_example() -> None:
    with pytest.raises(UsageError) as refused:
        parse_moment("30/11/2026 06:15")
    assert str(refused.value) == (
        "--at '30/11/2026 06:15' is not an ISO 8601 moment; expected a date and time such as "
        "2026-11-30T06:15:00+01:00, or 2026-11-30 05:15:00 read as UTC: correct the time"
    )


def test_a_moment_still_to_come_is_refused() -> None:
    later = utc_now() + timedelta(hours=1)
    with pytest.raises(UsageError, match="is later than now .*; explain the present without --at"):
        refuse_future(later)


LOAD = TaskRow(2, "load", Handler.SQL, RunCondition.ALL, None, 1, "orders")
# Run 7: queued at 0s, admitted at 1s; load's attempt ran from 2s and failed at 5s, and the run
# ended FAILED; paused from 12s to 14s; at 20s an operator marked load SUCCESS, which reopened
# the run (it is IN-PROGRESS now).
RUN = RunRow(
    pipeline_run_id=7,
    pipeline_id=1,
    pipeline_code="orders",
    project_code="default",
    run_key="manual:nightly",
    trigger_kind="MANUAL",
    run_date=date(2026, 11, 30),
    status=RunStatus.IN_PROGRESS,
    owner_id=None,
    lease_expires_at=None,
    start_date=at(1),
    end_date=None,
    max_parallel_tasks=None,
    sla_minutes=None,
    priority=0,
    default_pool="default",
    output_revision=1,
    message=None,
    queued_at=at(0),
)
ROW = TaskRunRow(
    task_run_id=70,
    task_id=2,
    status=TaskRunStatus.SUCCESS,
    rows_written=3,
    attempt_count=1,
    attempt_id=700,
    attempt_status=AttemptStatus.FAILED,
    retryable=False,
    attempt_ended_at=at(5),
    not_before=None,
    owner_id="host:1",
    cancel_requested_at=None,
    message="marked SUCCESS by alice: loaded by hand",
    error_message="table lnd.orders is missing",
    start_date=at(2),
    end_date=at(20),
)
HISTORY = RunHistory(
    attempts=(
        AttemptHistoryRow(
            70,
            700,
            1,
            AttemptStatus.FAILED,
            None,
            at(2),
            at(3),
            at(3),
            at(5),
            "host:1",
            False,
            "table lnd.orders is missing",
            None,
            None,
        ),
    ),
    interventions=(
        InterventionRow(
            None, "REOPEN", "FAILED", "IN-PROGRESS", None, "loaded by hand", at(20), "alice"
        ),
        InterventionRow(70, "MARK", "FAILED", "SUCCESS", 3, "loaded by hand", at(20), "alice"),
    ),
    pauses=(PauseSpan(at(12), at(14)),),
)
PIPELINE = PipelineShape((LOAD,), (), MappingProxyType({}))
RECORDS = ExplainRecords(
    run=RUN,
    controls=RunControls(paused=False, cancel_pending=False, reopened=True),
    task=LOAD,
    pipeline=PIPELINE,
    shape=build_shape(PIPELINE, 0),
    task_runs={2: ROW},
    attempts=(),
    gate_waits=(),
    gate_decisions=(),
    interventions=HISTORY.interventions,
)
RERUN = "etl-craft rerun --pipeline orders --run 7 --task load --reason ..."


def told(seconds: float) -> tuple[RunStatus, bool, str, str]:
    records = records_at(RECORDS, HISTORY, at(seconds))
    found = explain(snapshot_of(records), at=at(seconds))
    return found.run_status, found.paused, found.state, found.sentence


def test_the_run_and_its_task_as_they_stood_at_each_moment() -> None:
    assert told(0.5) == (
        RunStatus.QUEUED,
        False,
        "NOT_RUN",
        "load is ready to start: its dependencies are met; etl-craft run --pipeline "
        "orders --run 7 starts it if no process supervises the run",
    )
    assert told(2.5) == (
        RunStatus.IN_PROGRESS,
        False,
        "QUEUED",
        "load attempt 1 is queued and starts when run 7 has a free slot",
    )
    assert told(4) == (
        RunStatus.IN_PROGRESS,
        False,
        "RUNNING",
        "load is running attempt 1 of 1 (owner host:1); it settles when the attempt reports "
        "its outcome or its owner stops renewing its lease",
    )
    failed = (
        "FAILED",
        f"load failed on attempt 1 of 1: table lnd.orders is missing; fix the cause and rerun "
        f"it with {RERUN}",
    )
    # The moment the run ended is not stored once it is reopened: it reads as ended from the
    # last step recorded before the reopen, the attempt's end.
    assert told(5) == (RunStatus.FAILED, False, *failed)
    assert told(13) == (RunStatus.FAILED, True, *failed)
    assert told(19) == (RunStatus.FAILED, False, *failed)
    marked = (
        f"load was marked SUCCESS by alice (was FAILED): loaded by hand; to run it again: {RERUN}"
    )
    assert told(20) == (RunStatus.IN_PROGRESS, False, "SUCCEEDED", marked)


def test_a_moment_before_the_run_was_queued_is_refused() -> None:
    with pytest.raises(UsageError) as refused:
        records_at(RECORDS, HISTORY, at(-60))
    assert str(refused.value) == (
        "--at 2026-11-30 05:59:00 UTC is before run 7 of orders existed (it was queued "
        "2026-11-30 06:00:00 UTC); name a moment at or after it was queued"
    )


def test_after_its_last_step_a_task_run_reads_as_it_stands() -> None:
    records = records_at(RECORDS, HISTORY, at(60))
    assert records.task_runs == {2: ROW}
    assert records.run == RUN
    assert records.controls == RunControls(paused=False, cancel_pending=False, reopened=True)


def test_a_cancellation_is_pending_from_its_request_until_the_reopen() -> None:
    cancel = InterventionRow(None, "CANCEL", "IN-PROGRESS", "CANCELLED", None, "stop", at(4), "bob")
    history = RunHistory(HISTORY.attempts, (cancel, *HISTORY.interventions), HISTORY.pauses)
    pending = [
        records_at(RECORDS, history, at(seconds)).controls.cancel_pending
        for seconds in (3.5, 4, 19, 20)
    ]
    assert pending == [False, True, True, False]
