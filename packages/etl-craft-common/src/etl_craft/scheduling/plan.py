"""What a run needs next, decided from a snapshot: skips, starts, retries, or its end.

Pure: the supervisor reads the Engine DB into a snapshot and applies the plan through
transitions; a restarted supervisor computes the same plan from the same tables.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from etl_craft.core.enums import AttemptStatus, Handler, RunStatus, TaskRunStatus
from etl_craft.core.graph import (
    RUNNING,
    DependencyGraph,
    RunState,
    TaskNode,
    TaskOutcome,
    Unsatisfiable,
)
from etl_craft.enginedb.runs import TaskRunRow

MAX_RETRY_DELAY_SECONDS = 3600.0
RETRIED_STATUSES = frozenset({AttemptStatus.FAILED, AttemptStatus.TIMED_OUT, AttemptStatus.LOST})


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 0
    delay_seconds: float = 60.0
    backoff: float = 2.0

    def delay_after(self, attempt_number: int) -> timedelta:
        """The wait before the attempt after ``attempt_number``: delay x backoff^(n-1), capped."""
        seconds = self.delay_seconds * self.backoff ** max(0, attempt_number - 1)
        return timedelta(seconds=min(MAX_RETRY_DELAY_SECONDS, seconds))


@dataclass(frozen=True)
class TaskRunState:
    task_run_id: int
    task_id: int
    status: TaskRunStatus
    rows_written: int | None
    attempt_count: int
    attempt_status: AttemptStatus | None
    retryable: bool
    attempt_ended_at: datetime | None


def task_run_state(row: TaskRunRow) -> TaskRunState:
    """The planner's view of a task run read from the Engine DB."""
    return TaskRunState(
        task_run_id=row.task_run_id,
        task_id=row.task_id,
        status=row.status,
        rows_written=row.rows_written,
        attempt_count=row.attempt_count,
        attempt_status=row.attempt_status,
        retryable=row.retryable,
        attempt_ended_at=row.attempt_ended_at,
    )


@dataclass(frozen=True)
class Retry:
    task_run_id: int
    task_id: int
    not_before: datetime


@dataclass(frozen=True)
class Again:
    """A task run the engine skipped whose dependencies are met now: its next attempt runs it."""

    task_run_id: int
    task: TaskNode


@dataclass(frozen=True)
class Plan:
    skip: tuple[Unsatisfiable, ...]
    start: tuple[TaskNode, ...]
    retry: tuple[Retry, ...]
    outcome: RunStatus | None  # set once the run has settled
    again: tuple[Again, ...] = ()  # skips the engine made that no longer hold

    @property
    def idle(self) -> bool:
        return not (self.skip or self.start or self.retry or self.again)


def retry_due(run: TaskRunState, policy: RetryPolicy) -> datetime | None:
    """When the task run's next attempt may start, or None when it won't be retried."""
    if run.status is not TaskRunStatus.FAILED or run.attempt_status not in RETRIED_STATUSES:
        return None
    if not run.retryable or run.attempt_count > policy.retries:
        return None
    ended = run.attempt_ended_at
    return None if ended is None else ended + policy.delay_after(run.attempt_count)


def graph_state(
    runs: Mapping[int, TaskRunState],
    policies: Mapping[int, RetryPolicy],
    external: Mapping[int, TaskOutcome] | None = None,
) -> RunState:
    # Upstreams in other pipelines, as their gates judged them; absent while a gate waits.
    outcomes: dict[int, TaskOutcome] = dict(external or {})
    for task_id, run in runs.items():
        pending_retry = retry_due(run, policies.get(task_id, RetryPolicy())) is not None
        outcomes[task_id] = (
            RUNNING if pending_retry else TaskOutcome(run.status, run.rows_written or 0)
        )
    return RunState(outcomes)


def engine_skipped(
    runs: Mapping[int, TaskRunState], operator_settled: Collection[int]
) -> frozenset[int]:
    """Tasks whose task run the engine recorded SKIPPED (no attempt, no operator's SKIP or MARK):
    a judgement on their upstreams' outcomes, which holds only while those outcomes do."""
    return frozenset(
        task_id
        for task_id, run in runs.items()
        if run.status is TaskRunStatus.SKIPPED
        and run.attempt_count == 0
        and run.task_run_id not in operator_settled
    )


def runnable_again(
    graph: DependencyGraph,
    runs: Mapping[int, TaskRunState],
    policies: Mapping[int, RetryPolicy],
    rejudged: Collection[int],
) -> tuple[Again, ...]:
    """The task runs of ``rejudged`` (tasks the engine skipped) that could start now: judged
    as if they had not run, so a skip made on an outcome that has changed since no longer holds.
    """
    if not rejudged:
        return ()
    others = {task_id: run for task_id, run in runs.items() if task_id not in rejudged}
    ready = graph.ready(graph_state(others, policies))
    return tuple(
        Again(runs[task.task_id].task_run_id, task) for task in ready if task.task_id in rejudged
    )


def still_skipped(
    graph: DependencyGraph,
    runs: Mapping[int, TaskRunState],
    policies: Mapping[int, RetryPolicy],
    rejudged: Collection[int],
) -> tuple[Unsatisfiable, ...]:
    """The task runs of ``rejudged`` that could not run now either, with today's reason."""
    others = {task_id: run for task_id, run in runs.items() if task_id not in rejudged}
    unsatisfiable = graph.unsatisfiable(graph_state(others, policies))
    return tuple(item for item in unsatisfiable if item.task.task_id in rejudged)


def plan(
    graph: DependencyGraph,
    runs: Mapping[int, TaskRunState],
    policies: Mapping[int, RetryPolicy],
    handlers: Mapping[int, Handler],
    external: Mapping[int, TaskOutcome] | None = None,
    rejudged: Collection[int] = (),
) -> Plan:
    again = runnable_again(graph, runs, policies, rejudged)
    state = graph_state(runs, policies, external)
    for item in again:
        # About to run again: what depends on it waits for its new outcome.
        state = state.with_outcome(item.task.task_id, RUNNING)
    skip = graph.settle(state)
    for skipped in skip:
        state = state.with_outcome(skipped.task.task_id, TaskOutcome(TaskRunStatus.SKIPPED))
    start = graph.ready(state)
    retry = tuple(
        Retry(run.task_run_id, task_id, due)
        for task_id, run in runs.items()
        if run.attempt_status is not AttemptStatus.QUEUED
        and (due := retry_due(run, policies.get(task_id, RetryPolicy()))) is not None
    )
    # Every task of the pipeline must have settled; one waiting on a gate has no outcome yet.
    unsettled = any(
        task_id not in state.outcomes or not state.outcomes[task_id].status.terminal
        for task_id in handlers
    )
    busy = start or retry or skip or again or unsettled
    outcome = None if busy else run_outcome(runs, handlers)
    return Plan(skip, start, retry, outcome, again)


def run_outcome(runs: Mapping[int, TaskRunState], handlers: Mapping[int, Handler]) -> RunStatus:
    """FAILED when a task that decides the run failed or was cancelled; alerts don't decide."""
    for task_id, run in runs.items():
        if handlers.get(task_id) is Handler.EMAIL_ALERT:
            continue
        if run.status in (TaskRunStatus.FAILED, TaskRunStatus.CANCELLED):
            return RunStatus.FAILED
    return RunStatus.SUCCESS
