"""`explain`: why a task of a run is in its state, and what would make it run.

`read_explain_snapshot` reads everything the answer depends on in one read transaction (and
`read_explain_records_at` the same rows as they stood at a past moment); `explain` is pure over
that snapshot, so each state has a golden test of its own and the past reads as the present.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from functools import partial
from typing import ClassVar

from etl_craft.core.enums import (
    AttemptStatus,
    DependencyType,
    RunCondition,
    RunStatus,
    TaskRunStatus,
)
from etl_craft.core.errors import MetadataError, RunStateError
from etl_craft.core.graph import TaskOutcome, dependency_met
from etl_craft.enginedb.explain_reads import GateDecisionRow, GateWaitRow
from etl_craft.enginedb.runs import TaskRunRow
from etl_craft.operations.context import OperationContext
from etl_craft.operations.explain.past import read_explain_records_at, refuse_future
from etl_craft.operations.explain.snapshot import (
    ExplainSnapshot,
    read_explain_snapshot,
    snapshot_of,
)
from etl_craft.operations.runs.history import run_status
from etl_craft.operations.validate.blocking import (
    NO_FINDINGS,
    project_blocking_findings,
    refusal_text,
)
from etl_craft.operations.validate.findings import Finding
from etl_craft.scheduling.plan import retry_due, task_run_state


class TaskState(StrEnum):
    NOT_RUN = "NOT_RUN"
    WAITING_ON_GATE = "WAITING_ON_GATE"
    BLOCKED_BY_FAILURE = "BLOCKED_BY_FAILURE"
    UNSATISFIABLE = "UNSATISFIABLE"
    PAUSED = "PAUSED"
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    RETRY_SCHEDULED = "RETRY_SCHEDULED"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    CANCELLED = "CANCELLED"


@dataclass(frozen=True)
class DependencyView:
    upstream: str
    pipeline_code: str
    type: DependencyType
    cross_pipeline: bool
    upstream_status: TaskRunStatus | None
    upstream_rows: int | None
    met: bool | None  # None: not judged yet, the upstream has not settled
    reason: str | None  # the latest gate decision's, for a cross-pipeline dependency


@dataclass(frozen=True)
class RetrySchedule:
    retries: int
    delay_seconds: float
    backoff: float
    next_attempt: int | None
    not_before: datetime | None


@dataclass(frozen=True)
class Explanation:
    schema: ClassVar[str] = "etl-craft/explain/1"
    run_id: int
    pipeline_code: str
    run_key: str
    run_status: RunStatus
    paused: bool
    cancel_pending: bool
    task_code: str
    state: TaskState
    task_status: TaskRunStatus | None
    attempts: int
    latest_error: str | None
    run_condition: RunCondition
    required_count: int
    dependencies: tuple[DependencyView, ...]
    gate_decisions: tuple[GateDecisionRow, ...]
    gate_waits: tuple[GateWaitRow, ...]
    retry: RetrySchedule
    sentence: str
    blocking_findings: tuple[Finding, ...] = ()  # the pipeline's, which keep it from running
    at: datetime | None = None  # the past moment explained; None: the present


@dataclass(frozen=True)
class _Facts:
    snap: ExplainSnapshot
    deps: tuple[DependencyView, ...]
    needed: int
    retry: RetrySchedule
    latest_error: str | None

    @property
    def code(self) -> str:
        return self.snap.task_code

    @property
    def unmet(self) -> tuple[DependencyView, ...]:
        return tuple(dep for dep in self.deps if dep.met is False)

    @property
    def pending(self) -> tuple[DependencyView, ...]:
        return tuple(dep for dep in self.deps if dep.met is None)

    @property
    def met(self) -> int:
        return sum(1 for dep in self.deps if dep.met)

    @property
    def blocked(self) -> bool:
        return self.met + len(self.pending) < self.needed

    @property
    def failures(self) -> tuple[DependencyView, ...]:
        ended = (TaskRunStatus.FAILED, TaskRunStatus.CANCELLED)
        return tuple(d for d in self.unmet if not d.cross_pipeline and d.upstream_status in ended)

    def rerun(self, task: str) -> str:
        run = self.snap.run
        return (
            f"etl-craft rerun --pipeline {run.pipeline_code} --run {run.run_id} "
            f"--task {task} --reason ..."
        )


def explain(
    snap: ExplainSnapshot,
    findings: tuple[Finding, ...] = NO_FINDINGS,
    at: datetime | None = None,
) -> Explanation:
    facts = _Facts(snap, _dependency_views(snap), _needed(snap), _retry(snap), _error(snap))
    state, sentence = _judge(facts)
    if findings and state in _WOULD_RUN:
        state, sentence = TaskState.NOT_RUN, refusal_text(snap.run.pipeline_code, findings)
    run, task = snap.run, snap.task_run
    return Explanation(
        run_id=run.run_id,
        pipeline_code=run.pipeline_code,
        run_key=run.run_key,
        run_status=run.status,
        paused=run.paused,
        cancel_pending=run.cancel_pending,
        task_code=snap.task_code,
        state=state,
        task_status=task.status if task else None,
        attempts=task.attempt_count if task else 0,
        latest_error=facts.latest_error,
        run_condition=snap.run_condition,
        required_count=facts.needed,
        dependencies=facts.deps,
        gate_decisions=snap.gate_decisions,
        gate_waits=snap.gate_waits,
        retry=facts.retry,
        sentence=sentence,
        blocking_findings=findings,
        at=at,
    )


# The states whose next step would be a start: blocking findings mean no start will come.
_WOULD_RUN = frozenset(
    {TaskState.NOT_RUN, TaskState.WAITING_ON_GATE, TaskState.PAUSED, TaskState.RETRY_SCHEDULED}
)


def _dependency_views(snap: ExplainSnapshot) -> tuple[DependencyView, ...]:
    latest = {d.task_dependency_id: d for d in snap.gate_decisions}
    views = []
    for dep in snap.dependencies:
        decision = latest.get(dep.task_dependency_id)
        if dep.cross_pipeline:
            met = None if decision is None else decision.result != "UNSATISFIED"
        elif dep.upstream_status is None or not dep.upstream_status.terminal:
            met = None
        else:
            outcome = TaskOutcome(dep.upstream_status, dep.upstream_rows or 0)
            met = None if dep.upstream_retry_pending else dependency_met(dep.type, outcome)
        name = f"{dep.upstream_pipeline}.{dep.upstream_code}" if dep.cross_pipeline else None
        views.append(
            DependencyView(
                upstream=name or dep.upstream_code,
                pipeline_code=dep.upstream_pipeline,
                type=dep.type,
                cross_pipeline=dep.cross_pipeline,
                upstream_status=dep.upstream_status,
                upstream_rows=dep.upstream_rows,
                met=met,
                reason=decision.reason if decision else None,
            )
        )
    return tuple(views)


def _needed(snap: ExplainSnapshot) -> int:
    total = len(snap.dependencies)
    counts = {RunCondition.ALL: total, RunCondition.ANY: min(1, total)}
    return counts.get(snap.run_condition, snap.required_count or 0)


def _error(snap: ExplainSnapshot) -> str | None:
    errors = [a.error_message for a in snap.attempts if a.error_message]
    latest = errors[-1] if errors else (snap.task_run.error_message if snap.task_run else None)
    return latest.splitlines()[0] if latest else None


def _retry(snap: ExplainSnapshot) -> RetrySchedule:
    policy, row = snap.retry, snap.task_run
    schedule = partial(RetrySchedule, policy.retries, policy.delay_seconds, policy.backoff)
    if row is None or snap.run.status.terminal or snap.run.cancel_pending:
        return schedule(None, None)  # an ended or cancelled run retries nothing
    if row.attempt_status is AttemptStatus.QUEUED and row.not_before:
        return schedule(row.attempt_count, row.not_before)
    due = retry_due(task_run_state(row), policy)
    return schedule(None if due is None else row.attempt_count + 1, due)


def _judge(facts: _Facts) -> tuple[TaskState, str]:
    row = facts.snap.task_run
    if facts.retry.next_attempt is not None:
        return TaskState.RETRY_SCHEDULED, _retry_sentence(facts)
    if row is None:
        return _not_run(facts)
    if row.status is TaskRunStatus.IN_PROGRESS:
        return _in_progress(facts, row)
    return _ended(facts, row)


def _retry_sentence(facts: _Facts) -> str:
    retry, done = facts.retry, (facts.retry.next_attempt or 1) - 1
    error = f" ({facts.latest_error})" if facts.latest_error else ""
    when = f"at {retry.not_before:%Y-%m-%d %H:%M:%S} UTC" if retry.not_before else "now"
    when += ", once the pipeline is resumed" if facts.snap.run.paused else ""
    return (
        f"{facts.code} failed attempt {done} of {retry.retries + 1}{error}; attempt "
        f"{retry.next_attempt} starts {when} (RETRIES {retry.retries}, "
        f"RETRY_DELAY_SECONDS {retry.delay_seconds:g}, RETRY_BACKOFF {retry.backoff:g})"
    )


def _not_run(facts: _Facts) -> tuple[TaskState, str]:
    run, code = facts.snap.run, facts.code
    if run.status.terminal:
        return TaskState.NOT_RUN, (
            f"{code} never ran: run {run.run_id} ended {run.status}; reopen it with etl-craft "
            f"reopen --pipeline {run.pipeline_code} --run {run.run_id} --reason ... "
            "and run it again"
        )
    if run.cancel_pending:
        return TaskState.NOT_RUN, (
            f"{code} will not start: run {run.run_id} has a cancellation pending; start a new "
            f"run with etl-craft run --pipeline {run.pipeline_code}"
        )
    if facts.blocked:
        return _blocked(facts, f"{code} cannot run because {_because(facts)}")
    open_waits = [wait for wait in facts.snap.gate_waits if wait.resolved_at is None]
    if open_waits:
        return TaskState.WAITING_ON_GATE, _gate_sentence(facts, open_waits[-1])
    if run.paused:
        return TaskState.PAUSED, (
            f"{code} has not started because pipeline {run.pipeline_code} is paused; "
            f"etl-craft resume --pipeline {run.pipeline_code} lets run {run.run_id} go on"
        )
    if facts.met < facts.needed:
        return TaskState.NOT_RUN, _waiting_sentence(facts)
    return TaskState.NOT_RUN, (
        f"{code} is ready to start: its dependencies are met; etl-craft run --pipeline "
        f"{run.pipeline_code} --run {run.run_id} starts it if no process supervises the run"
    )


def _blocked(facts: _Facts, said: str, *, recorded: bool = False) -> tuple[TaskState, str]:
    failures = facts.failures
    if failures:
        names = ", ".join(dep.upstream for dep in failures)
        task = failures[0].upstream if len(failures) == 1 else "<task>"
        state = TaskState.SKIPPED if recorded else TaskState.BLOCKED_BY_FAILURE
        return state, f"{said}; rerun {names} with {facts.rerun(task)}"
    run = facts.snap.run
    local = [dep.upstream for dep in facts.unmet if not dep.cross_pipeline]
    remedy = (
        f"a rerun of {local[0]} that meets the dependency runs it: {facts.rerun(local[0])}"
        if local
        else f"a new run of {run.pipeline_code} judges its gates again"
    )
    if recorded:
        return TaskState.SKIPPED, f"{said}; {remedy}"
    return TaskState.UNSATISFIABLE, f"{said}, so run {run.run_id} skips it; {remedy}"


def _because(facts: _Facts) -> str:
    phrases = _join([_unmet_phrase(dep) for dep in facts.unmet])
    condition = facts.snap.run_condition
    if condition is RunCondition.ALL:
        return phrases
    if condition is RunCondition.ANY:
        return f"none of its dependencies can be met: {phrases}"
    return (
        f"only {facts.met + len(facts.pending)} of the {facts.needed} dependencies it requires "
        f"can be met: {phrases}"
    )


_VERBS = {
    TaskRunStatus.SUCCESS: "succeeded",
    TaskRunStatus.FAILED: "failed",
    TaskRunStatus.SKIPPED: "was skipped",
    TaskRunStatus.CANCELLED: "was cancelled",
}


def _unmet_phrase(dep: DependencyView) -> str:
    if dep.cross_pipeline:
        return f"the gate on {dep.upstream} decided UNSATISFIED: {dep.reason}"
    status = dep.upstream_status
    if dep.type is DependencyType.HAS_DATA and status is TaskRunStatus.SUCCESS:
        return f"{dep.upstream} wrote no rows (HAS_DATA)"
    note = " (FAILURE dependency)" if dep.type is DependencyType.FAILURE else ""
    return f"{dep.upstream} {_VERBS[status] if status else 'did not run'}{note}"


def _join(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else f"{', '.join(phrases[:-1])} and {phrases[-1]}"


def _gate_sentence(facts: _Facts, wait: GateWaitRow) -> str:
    pending = [dep for dep in facts.pending if dep.cross_pipeline]
    on = _join([f"{dep.upstream} ({dep.type} dependency)" for dep in pending]) if pending else ""
    gate = "the pipeline gate of its run" if wait.pipeline_gate else f"a gate on {on or 'its run'}"
    found = f": {wait.last_reason}" if wait.last_reason else ""
    return (
        f"{facts.code} waits on {gate}{found}; the gate looks again at "
        f"{wait.next_check_at:%Y-%m-%d %H:%M:%S} UTC and gives up at "
        f"{wait.wait_until:%Y-%m-%d %H:%M:%S} UTC"
    )


def _waiting_sentence(facts: _Facts) -> str:
    waits = _join(
        [f"{dep.upstream} ({dep.type} dependency), {_pending(dep)}" for dep in facts.pending]
    )
    if facts.snap.run_condition is RunCondition.ALL:
        return f"{facts.code} waits for {waits}"
    return (
        f"{facts.code} needs {facts.needed} of its {len(facts.deps)} dependencies met "
        f"(RUN_CONDITION {facts.snap.run_condition}) and has {facts.met}; it waits for {waits}"
    )


_PENDING = {None: "which has not started", TaskRunStatus.FAILED: "which failed and will be retried"}


def _pending(dep: DependencyView) -> str:
    if dep.cross_pipeline:
        return "which no gate has judged yet"
    return _PENDING.get(dep.upstream_status, "which is still running")


def _in_progress(facts: _Facts, row: TaskRunRow) -> tuple[TaskState, str]:
    total = facts.snap.retry.retries + 1
    if row.attempt_status is AttemptStatus.QUEUED:
        return TaskState.QUEUED, (
            f"{facts.code} attempt {row.attempt_count} is queued and starts when run "
            f"{facts.snap.run.run_id} has a free slot"
        )
    owner = f" (owner {row.owner_id})" if row.owner_id else ""
    return TaskState.RUNNING, (
        f"{facts.code} is running attempt {row.attempt_count} of {total}{owner}; it settles "
        "when the attempt reports its outcome or its owner stops renewing its lease"
    )


_ENDED = {
    TaskRunStatus.SUCCESS: TaskState.SUCCEEDED,
    TaskRunStatus.FAILED: TaskState.FAILED,
    TaskRunStatus.SKIPPED: TaskState.SKIPPED,
    TaskRunStatus.CANCELLED: TaskState.CANCELLED,
}


def _ended(facts: _Facts, row: TaskRunRow) -> tuple[TaskState, str]:
    code, again = facts.code, facts.rerun(facts.code)
    mark = facts.snap.mark
    if mark is not None:
        return _ENDED[row.status], (
            f"{code} was marked {row.status} by {mark.requested_by} (was "
            f"{mark.from_status or 'not run'}): {mark.reason}; to run it again: {again}"
        )
    if row.status is TaskRunStatus.SUCCESS:
        rows = row.rows_written
        wrote = "" if rows is None else f" and wrote {rows} row{'' if rows == 1 else 's'}"
        return TaskState.SUCCEEDED, (
            f"{code} succeeded on attempt {row.attempt_count}{wrote}; to run it again: {again}"
        )
    if row.status is TaskRunStatus.SKIPPED:
        if facts.blocked:
            return _blocked(facts, f"{code} was skipped because {_because(facts)}", recorded=True)
        why = f": {row.message}" if row.message else ""
        return TaskState.SKIPPED, f"{code} was skipped{why}; rerun it with {again}"
    if row.status is TaskRunStatus.CANCELLED:
        return TaskState.CANCELLED, f"{code} was cancelled; rerun it with {again}"
    error = f": {facts.latest_error}" if facts.latest_error else ""
    return TaskState.FAILED, (
        f"{code} failed on attempt {row.attempt_count} of {facts.snap.retry.retries + 1}{error}; "
        f"fix the cause and rerun it with {again}"
    )


def explain_task(
    ctx: OperationContext,
    pipeline_code: str,
    task_code: str,
    run_id: int | None,
    at: datetime | None = None,
) -> Explanation:
    """Explain a task of the named run, else of the pipeline's single run in progress; a
    pipeline that cannot run and has no such run is explained by its blocking findings.
    With ``at``, explain the task as it stood at that past moment, from the run's records."""
    if at is not None:
        refuse_future(at)
    with ctx.engine.read_only() as conn:
        findings = project_blocking_findings(conn, ctx.project_code).get(pipeline_code, ())
    try:
        chosen = run_status(ctx, pipeline_code, run_id).run_id
    except RunStateError:
        if findings:
            raise MetadataError(
                f"{refusal_text(pipeline_code, findings)}; so task {task_code} has no run"
            ) from None
        raise
    orchestration = ctx.connector.orchestration if ctx.connector else None
    retries = orchestration.retries if orchestration else 0
    with ctx.engine.read_only() as conn:
        if at is None:
            snap = read_explain_snapshot(conn, chosen, task_code, default_retries=retries)
            return explain(snap, findings)
        records = read_explain_records_at(conn, chosen, task_code, at, default_retries=retries)
    # Blocking findings judge today's metadata, not the moment's: the past is told without them.
    return explain(snapshot_of(records), at=at)
