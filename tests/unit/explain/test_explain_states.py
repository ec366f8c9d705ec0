"""Golden explanations, one per state a task can be in: each asserts the whole sentence."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from etl_craft.core.enums import (
    AttemptStatus,
    DependencyType,
    RunCondition,
    RunStatus,
    TaskRunStatus,
)
from etl_craft.enginedb.explain_reads import (
    AttemptRow,
    GateDecisionRow,
    GateWaitRow,
    InterventionRow,
)
from etl_craft.enginedb.runs import TaskRunRow
from etl_craft.operations.explain.snapshot import (
    DependencySnapshot,
    ExplainSnapshot,
    RunHeader,
    standing_mark,
)
from etl_craft.operations.explain.task import TaskState, explain
from etl_craft.operations.serialize import to_json
from etl_craft.scheduling.plan import RetryPolicy

T0 = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
RUN = RunHeader(7, "orders", "manual:nightly", RunStatus.IN_PROGRESS)
RERUN = "etl-craft rerun --pipeline orders --run 7 --task {} --reason ..."


def task_run(
    status: TaskRunStatus,
    *,
    attempts: int = 1,
    attempt_status: AttemptStatus | None = None,
    rows: int | None = None,
    not_before: datetime | None = None,
    message: str | None = None,
) -> TaskRunRow:
    return TaskRunRow(
        task_run_id=70,
        task_id=2,
        status=status,
        rows_written=rows,
        attempt_count=attempts,
        attempt_id=700 + attempts if attempts else None,
        attempt_status=attempt_status,
        retryable=True,
        attempt_ended_at=T0 if attempt_status and attempt_status.terminal else None,
        not_before=not_before,
        owner_id=None,
        cancel_requested_at=None,
        message=message,
        error_message=None,
        start_date=T0,
        end_date=None,
    )


def extract(
    status: TaskRunStatus | None,
    rows: int | None = None,
    dependency_type: DependencyType = DependencyType.SUCCESS,
) -> DependencySnapshot:
    return DependencySnapshot(1, "extract", "orders", dependency_type, False, status, rows)


def snapshot(*dependencies: DependencySnapshot, **changes: Any) -> ExplainSnapshot:
    base = ExplainSnapshot(
        run=RUN,
        task_code="load",
        run_condition=RunCondition.ALL,
        required_count=None,
        retry=RetryPolicy(),
        task_run=None,
        dependencies=dependencies,
    )
    return replace(base, **changes)


def test_a_task_not_run_waits_for_its_running_upstream() -> None:
    found = explain(snapshot(extract(TaskRunStatus.IN_PROGRESS)))
    assert found.state is TaskState.NOT_RUN
    assert found.sentence == "load waits for extract (SUCCESS dependency), which is still running"
    assert (found.task_status, found.attempts, found.required_count) == (None, 0, 1)
    assert [(d.upstream, d.upstream_status, d.met) for d in found.dependencies] == [
        ("extract", TaskRunStatus.IN_PROGRESS, None)
    ]


def test_an_upstream_failure_with_a_retry_to_come_is_still_waited_for() -> None:
    retrying = replace(extract(TaskRunStatus.FAILED), upstream_retry_pending=True)
    found = explain(snapshot(retrying))
    assert found.state is TaskState.NOT_RUN
    assert found.sentence == (
        "load waits for extract (SUCCESS dependency), which failed and will be retried"
    )
    assert found.dependencies[0].met is None


def test_a_task_waiting_on_a_cross_pipeline_gate_says_when_it_looks_again() -> None:
    publish = DependencySnapshot(2, "publish", "sales", DependencyType.SUCCESS, True)
    wait = GateWaitRow(
        pipeline_gate=False,
        first_check_at=T0,
        next_check_at=T0 + timedelta(minutes=5),
        looks=3,
        wait_until=T0 + timedelta(hours=6),
        last_reason="run 12 of sales is IN-PROGRESS",
        resolved_at=None,
    )
    found = explain(snapshot(publish, gate_waits=(wait,)))
    assert found.state is TaskState.WAITING_ON_GATE
    assert found.sentence == (
        "load waits on a gate on sales.publish (SUCCESS dependency): run 12 of sales is "
        "IN-PROGRESS; the gate looks again at 2026-11-30 06:05:00 UTC and gives up at "
        "2026-11-30 12:00:00 UTC"
    )
    assert found.gate_waits == (wait,)
    assert [(d.upstream, d.cross_pipeline, d.met) for d in found.dependencies] == [
        ("sales.publish", True, None)
    ]


def test_a_task_blocked_by_a_failed_upstream_names_the_rerun() -> None:
    found = explain(snapshot(extract(TaskRunStatus.FAILED)))
    assert found.state is TaskState.BLOCKED_BY_FAILURE
    assert found.sentence == (
        f"load cannot run because extract failed; rerun extract with {RERUN.format('extract')}"
    )
    assert found.dependencies[0].met is False


def test_an_unsatisfiable_task_says_which_dependency_cannot_be_met() -> None:
    found = explain(snapshot(extract(TaskRunStatus.SUCCESS, 0, DependencyType.HAS_DATA)))
    assert found.state is TaskState.UNSATISFIABLE
    assert found.sentence == (
        "load cannot run because extract wrote no rows (HAS_DATA), so run 7 skips it; a rerun "
        f"of extract that meets the dependency runs it: {RERUN.format('extract')}"
    )
    assert [(d.type, d.upstream_rows, d.met) for d in found.dependencies] == [
        (DependencyType.HAS_DATA, 0, False)
    ]


def test_an_unsatisfied_gate_decision_is_listed_with_its_reason() -> None:
    publish = DependencySnapshot(2, "publish", "sales", DependencyType.SUCCESS, True)
    decision = GateDecisionRow(
        task_dependency_id=2,
        upstream_code="publish",
        upstream_pipeline="sales",
        result="UNSATISFIED",
        reason="no SUCCESS run of sales for 2026-11-30 before WAIT_TIMEOUT",
        decided_at=T0,
        decided_by="system",
    )
    found = explain(
        snapshot(extract(TaskRunStatus.SUCCESS, 3), publish, gate_decisions=(decision,))
    )
    assert found.state is TaskState.UNSATISFIABLE
    assert found.sentence == (
        "load cannot run because the gate on sales.publish decided UNSATISFIED: no SUCCESS run "
        "of sales for 2026-11-30 before WAIT_TIMEOUT, so run 7 skips it; a new run of orders "
        "judges its gates again"
    )
    assert found.gate_decisions == (decision,)
    assert [(d.upstream, d.met, d.reason) for d in found.dependencies] == [
        ("extract", True, None),
        ("sales.publish", False, decision.reason),
    ]


def test_a_failed_task_with_retries_left_says_when_the_next_attempt_starts() -> None:
    failed = task_run(TaskRunStatus.FAILED, attempt_status=AttemptStatus.FAILED)
    first = AttemptRow(1, AttemptStatus.FAILED, ended_at=T0, error_message="division by zero\nat 3")
    found = explain(
        snapshot(
            extract(TaskRunStatus.SUCCESS, 3),
            task_run=failed,
            attempts=(first,),
            retry=RetryPolicy(retries=2, delay_seconds=60, backoff=2),
        )
    )
    assert found.state is TaskState.RETRY_SCHEDULED
    assert found.sentence == (
        "load failed attempt 1 of 3 (division by zero); attempt 2 starts at 2026-11-30 "
        "06:01:00 UTC (RETRIES 2, RETRY_DELAY_SECONDS 60, RETRY_BACKOFF 2)"
    )
    assert (found.retry.next_attempt, found.retry.not_before) == (2, T0 + timedelta(minutes=1))
    assert (found.attempts, found.latest_error) == (1, "division by zero")


def test_a_queued_retry_reads_its_not_before() -> None:
    due = T0 + timedelta(minutes=2)
    queued = task_run(
        TaskRunStatus.IN_PROGRESS, attempts=3, attempt_status=AttemptStatus.QUEUED, not_before=due
    )
    history = (
        AttemptRow(1, AttemptStatus.FAILED, error_message="timeout"),
        AttemptRow(2, AttemptStatus.TIMED_OUT, error_message="stopped after 30 s"),
        AttemptRow(3, AttemptStatus.QUEUED, not_before=due),
    )
    found = explain(snapshot(task_run=queued, attempts=history, retry=RetryPolicy(2, 60, 2)))
    assert found.state is TaskState.RETRY_SCHEDULED
    assert found.sentence == (
        "load failed attempt 2 of 3 (stopped after 30 s); attempt 3 starts at 2026-11-30 "
        "06:02:00 UTC (RETRIES 2, RETRY_DELAY_SECONDS 60, RETRY_BACKOFF 2)"
    )


def test_a_retry_of_a_paused_run_waits_for_resume() -> None:
    failed = task_run(TaskRunStatus.FAILED, attempt_status=AttemptStatus.FAILED)
    found = explain(
        snapshot(task_run=failed, retry=RetryPolicy(1, 30, 2), run=replace(RUN, paused=True))
    )
    assert found.state is TaskState.RETRY_SCHEDULED
    assert found.sentence == (
        "load failed attempt 1 of 2; attempt 2 starts at 2026-11-30 06:00:30 UTC, once the "
        "pipeline is resumed (RETRIES 1, RETRY_DELAY_SECONDS 30, RETRY_BACKOFF 2)"
    )


def test_a_cancelled_run_schedules_no_retry() -> None:
    failed = task_run(TaskRunStatus.FAILED, attempt_status=AttemptStatus.FAILED)
    ended = replace(RUN, status=RunStatus.CANCELLED)
    found = explain(snapshot(task_run=failed, retry=RetryPolicy(1, 30, 2), run=ended))
    assert (found.state, found.retry.next_attempt) == (TaskState.FAILED, None)
    assert found.sentence == (
        f"load failed on attempt 1 of 2; fix the cause and rerun it with {RERUN.format('load')}"
    )


def test_a_ready_task_of_a_paused_run_waits_for_resume() -> None:
    found = explain(snapshot(extract(TaskRunStatus.SUCCESS, 3), run=replace(RUN, paused=True)))
    assert found.state is TaskState.PAUSED
    assert found.sentence == (
        "load has not started because pipeline orders is paused; etl-craft resume "
        "--pipeline orders lets run 7 go on"
    )
    assert (found.paused, found.run_status) == (True, RunStatus.IN_PROGRESS)
    assert found.dependencies[0].met is True


def test_a_succeeded_task_says_how_to_run_it_again() -> None:
    done = task_run(TaskRunStatus.SUCCESS, attempt_status=AttemptStatus.SUCCESS, rows=3)
    found = explain(snapshot(extract(TaskRunStatus.SUCCESS, 3), task_run=done))
    assert found.state is TaskState.SUCCEEDED
    assert found.sentence == (
        f"load succeeded on attempt 1 and wrote 3 rows; to run it again: {RERUN.format('load')}"
    )
    assert (found.task_status, found.attempts) == (TaskRunStatus.SUCCESS, 1)


def test_a_task_skipped_after_a_failure_names_the_upstream_to_rerun() -> None:
    skipped = task_run(TaskRunStatus.SKIPPED, attempts=0, message="skipped because extract failed")
    found = explain(snapshot(extract(TaskRunStatus.FAILED), task_run=skipped))
    assert found.state is TaskState.SKIPPED
    assert found.sentence == (
        f"load was skipped because extract failed; rerun extract with {RERUN.format('extract')}"
    )
    assert (found.task_status, found.attempts) == (TaskRunStatus.SKIPPED, 0)


def test_a_task_an_operator_skipped_gives_the_reason() -> None:
    skipped = task_run(TaskRunStatus.SKIPPED, attempts=0, message="source is down for a migration")
    found = explain(snapshot(extract(TaskRunStatus.SUCCESS, 3), task_run=skipped))
    assert found.state is TaskState.SKIPPED
    assert found.sentence == (
        f"load was skipped: source is down for a migration; rerun it with {RERUN.format('load')}"
    )


def mark_of(to_status: str, from_status: str | None) -> InterventionRow:
    return InterventionRow(70, "MARK", from_status, to_status, None, "fixed by hand", T0, "bob")


def test_a_task_an_operator_marked_names_the_operator_and_the_reason() -> None:
    marked = task_run(TaskRunStatus.FAILED, attempt_status=AttemptStatus.SUCCESS, rows=4)
    found = explain(snapshot(task_run=marked, mark=mark_of("FAILED", "SUCCESS")))
    assert found.state is TaskState.FAILED
    assert found.sentence == (
        f"load was marked FAILED by bob (was SUCCESS): fixed by hand; to run it again: "
        f"{RERUN.format('load')}"
    )


def test_a_mark_of_a_task_that_never_ran_outweighs_its_failed_upstream() -> None:
    marked = task_run(TaskRunStatus.SKIPPED, attempts=0)
    found = explain(
        snapshot(extract(TaskRunStatus.FAILED), task_run=marked, mark=mark_of("SKIPPED", None))
    )
    assert found.state is TaskState.SKIPPED
    assert found.sentence == (
        f"load was marked SKIPPED by bob (was not run): fixed by hand; to run it again: "
        f"{RERUN.format('load')}"
    )


def test_a_mark_stands_until_an_attempt_is_queued_after_it() -> None:
    mark = mark_of("SUCCESS", "FAILED")
    row = task_run(TaskRunStatus.SUCCESS, attempt_status=AttemptStatus.FAILED)
    before = AttemptRow(1, AttemptStatus.FAILED, queued_at=T0 - timedelta(minutes=5))
    after = AttemptRow(2, AttemptStatus.QUEUED, queued_at=T0 + timedelta(seconds=1))
    assert standing_mark((mark,), row, (before,)) == mark
    assert standing_mark((mark,), row, (before, after)) is None
    assert standing_mark((mark,), None, ()) is None


def test_a_failed_task_without_retries_left_says_to_fix_and_rerun() -> None:
    failed = task_run(TaskRunStatus.FAILED, attempt_status=AttemptStatus.FAILED)
    first = AttemptRow(1, AttemptStatus.FAILED, ended_at=T0, error_message="relation missing")
    found = explain(snapshot(task_run=failed, attempts=(first,)))
    assert found.state is TaskState.FAILED
    assert found.sentence == (
        "load failed on attempt 1 of 1: relation missing; fix the cause and rerun it with "
        f"{RERUN.format('load')}"
    )
    assert found.retry.next_attempt is None


def test_an_n_of_m_task_says_how_many_it_has() -> None:
    found = explain(
        snapshot(
            extract(TaskRunStatus.SUCCESS, 3),
            DependencySnapshot(3, "stage", "orders", DependencyType.SUCCESS),
            DependencySnapshot(4, "audit", "orders", DependencyType.SUCCESS),
            run_condition=RunCondition.N,
            required_count=2,
        )
    )
    assert found.state is TaskState.NOT_RUN
    assert found.sentence == (
        "load needs 2 of its 3 dependencies met (RUN_CONDITION N) and has 1; it waits for stage "
        "(SUCCESS dependency), which has not started and audit (SUCCESS dependency), which has "
        "not started"
    )
    assert found.required_count == 2


def test_the_json_document_names_its_schema_and_state() -> None:
    document = to_json(explain(snapshot(extract(TaskRunStatus.FAILED))))
    assert document["schema"] == "etl-craft/explain/1"
    assert document["state"] == "BLOCKED_BY_FAILURE"
    assert document["dependencies"][0] == {
        "upstream": "extract",
        "pipeline_code": "orders",
        "type": "SUCCESS",
        "cross_pipeline": False,
        "upstream_status": "FAILED",
        "upstream_rows": None,
        "met": False,
        "reason": None,
    }
