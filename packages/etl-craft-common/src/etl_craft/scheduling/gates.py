"""Cross-pipeline gates: judging a dependency on another pipeline's run without blocking.

A gate answers SATISFIED (with the upstream run, task run and revision it selected),
UNSATISFIED (final), or WAIT (look again later). Waiting holds no slot and no thread: the
wait is a row in AUD_GATE_WAITS, so a restarted supervisor resumes it. Backfill runs are never
judged. A dependency consumes an upstream run once; with CONSUME_REPAIRS a repaired run (a new
output revision of it) satisfies the dependency again.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from etl_craft.config.owner import DEFAULT_GATE_WAIT_MINUTES
from etl_craft.core.enums import DependencyType, RunStatus, TaskRunStatus
from etl_craft.core.graph import TaskOutcome, dependency_met

FIRST_LOOK_SECONDS = 2.0
MAX_LOOK_SECONDS = 60.0
DEFAULT_WAIT_MINUTES = DEFAULT_GATE_WAIT_MINUTES  # Orchestration gate_wait_minutes left out


class GateResult(StrEnum):
    SATISFIED = "SATISFIED"
    UNSATISFIED = "UNSATISFIED"
    BYPASSED = "BYPASSED"  # counted as met without judging the upstream (backfill, override)
    WAIT = "WAIT"


@dataclass(frozen=True)
class Upstream:
    """What the gate found upstream: the newest non-backfill run, and the task's run in it."""

    run_id: int | None
    run_status: RunStatus | None
    revision: int
    rows_written: int
    task_run_id: int | None = None
    task_status: TaskRunStatus | None = None
    task_rows: int | None = None


@dataclass(frozen=True)
class Consumed:
    run_id: int
    revision: int


@dataclass(frozen=True)
class Judgement:
    result: GateResult
    reason: str
    outcome: TaskOutcome | None = None  # the upstream's outcome, once it is settled

    @property
    def final(self) -> bool:
        return self.result is not GateResult.WAIT


def judge(
    name: str,
    dependency_type: DependencyType,
    upstream: Upstream,
    consumed: Consumed | None,
    *,
    consume_repairs: bool,
    task_level: bool,
) -> Judgement:
    """Judge one dependency on ``name`` (an upstream pipeline or pipeline.task)."""
    if upstream.run_id is None:
        return Judgement(GateResult.WAIT, f"{name} has not run yet")
    outcome = _settled_outcome(upstream, task_level)
    if outcome is None:
        return Judgement(GateResult.WAIT, f"{name} is still running in run {upstream.run_id}")
    repaired = consume_repairs and consumed is not None and upstream.revision > consumed.revision
    if consumed is not None and consumed.run_id == upstream.run_id and not repaired:
        return Judgement(
            GateResult.WAIT,
            f"{name}'s newest run {upstream.run_id} (revision {upstream.revision}) was already "
            "consumed; waiting for a newer run",
        )
    described = f"{name} {outcome.status.value} in run {upstream.run_id}"
    if dependency_met(dependency_type, outcome):
        return Judgement(GateResult.SATISFIED, f"{described} ({dependency_type})", outcome)
    return Judgement(
        GateResult.UNSATISFIED,
        f"{described}, which does not meet a {dependency_type} dependency",
        outcome,
    )


def timed_out(name: str, waited_minutes: float, last: Judgement) -> Judgement:
    return Judgement(
        GateResult.UNSATISFIED,
        f"gave up after waiting {waited_minutes:g} minutes for {name}: {last.reason}",
    )


def next_look_seconds(looks: int) -> float:
    """Looks spread out as a wait grows: 2 s, 3 s, 4.5 s, ... at most a minute apart."""
    return min(MAX_LOOK_SECONDS, FIRST_LOOK_SECONDS * 1.5 ** max(0, looks - 1))


def _settled_outcome(upstream: Upstream, task_level: bool) -> TaskOutcome | None:
    if task_level:
        status = upstream.task_status
        if status is None and upstream.run_status is not None and upstream.run_status.terminal:
            return TaskOutcome(TaskRunStatus.SKIPPED)  # the run ended without running the task
        if status is None or not status.terminal:
            return None
        return TaskOutcome(status, upstream.task_rows or 0)
    run_status = upstream.run_status
    if run_status is None or not run_status.terminal:
        return None
    return TaskOutcome(TaskRunStatus(run_status.value), upstream.rows_written)
