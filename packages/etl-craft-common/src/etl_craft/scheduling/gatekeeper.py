"""Gates of one run, kept across passes: judged when due, recorded when they admit or skip.

Some dependencies are decided without looking upstream (S2.A.5). On a backfill run (its
TRIGGER_KIND, so a restarted supervisor keeps the rule) every upstream in another pipeline reads
as having succeeded with data, unjudged and unconsumed: SUCCESS, HAS_DATA and ALWAYS edges are
met at once and recorded BYPASSED; FAILURE edges are not, recorded UNSATISFIED, and the task they
gate is skipped saying why. An operator's `Bypass` (run --force, --ignore-dependencies) records
BYPASSED for the dependencies it covers, whatever their type.

The profile's Orchestration dependency_gates bends the rule for every run (G5c): ``off`` judges
nothing and records each dependency BYPASSED; ``warn`` judges each once, without waiting, and
one that is not met is logged as a warning and recorded BYPASSED with the reason it was not.
Either way the decision row names the setting, so a bypassed run is never mistaken for a gated one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from etl_craft.config.rules import GatePolicy
from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import DependencyType, TaskRunStatus, TriggerKind
from etl_craft.core.graph import TaskOutcome
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.gate_records import (
    Decision,
    OpenWait,
    last_consumption,
    look_again,
    open_wait,
    record_decision,
    start_wait,
    upstream_run,
    upstream_task_run,
)
from etl_craft.enginedb.runs import read_run
from etl_craft.scheduling.gates import (
    DEFAULT_WAIT_MINUTES,
    Consumed,
    GateResult,
    Judgement,
    Upstream,
    judge,
    next_look_seconds,
    timed_out,
)


@dataclass(frozen=True)
class Dependency:
    """One dependency on another pipeline: a pipeline gate (task_id None) or a task's."""

    task_id: int | None
    upstream_pipeline_id: int
    upstream_task_id: int | None
    dependency_type: DependencyType
    consume_repairs: bool
    name: str
    task_dependency_id: int | None = None
    pipeline_dependency_id: int | None = None


log = logging.getLogger(__name__)
GATES_OFF = "the profile's Orchestration dependency_gates is off"
GATES_WARN = "the profile's Orchestration dependency_gates is warn"
GATES_OFF_FAILURE = (
    f"is not met: {GATES_OFF}, and a FAILURE dependency is met only by a failure it would "
    "have to look for"
)
BACKFILL_FAILURE = "backfills don't evaluate FAILURE dependencies on other pipelines"
# What a dependency decided without looking upstream sees there: met unless it is a FAILURE edge.
UNJUDGED = TaskOutcome(TaskRunStatus.SUCCESS, 1)
NOT_LOOKED = Upstream(None, None, 1, 0)


@dataclass(frozen=True)
class Bypass:
    """An operator's override: the dependencies of ``tasks`` (None: every one) count as met."""

    reason: str
    tasks: frozenset[int] | None = None

    def covers(self, dependency: Dependency) -> bool:
        return self.tasks is None or dependency.task_id in self.tasks


class Gatekeeper:
    def __init__(
        self,
        engine: EngineDB,
        run_id: int,
        wait_minutes: float = DEFAULT_WAIT_MINUTES,
        bypass: Bypass | None = None,
        policy: GatePolicy = GatePolicy.ENFORCE,
    ):
        self.engine, self.run_id, self.wait_minutes = engine, run_id, wait_minutes
        self.bypass, self.policy = bypass, policy
        self.decided: dict[tuple[int | None, str], tuple[Judgement, Upstream]] = {}
        with engine.read() as conn:
            self.backfill = read_run(conn, run_id).trigger_kind == TriggerKind.BACKFILL

    def judge_all(self, dependencies: Iterable[Dependency]) -> dict[Dependency, Judgement]:
        return {dependency: self.judgement(dependency) for dependency in dependencies}

    def judgement(self, dependency: Dependency) -> Judgement:
        key = (dependency.task_id, dependency.name)
        if key in self.decided:
            return self.decided[key][0]
        unjudged = self._unjudged(dependency)
        if unjudged is not None:
            self.decided[key] = (unjudged, NOT_LOOKED)
            return unjudged
        now = utc_now()
        with self.engine.transaction(SYSTEM) as conn:
            wait = open_wait(conn, self.run_id, dependency.task_id)
            if wait is not None and now < (wait.next_check_at or now):
                return Judgement(GateResult.WAIT, f"waiting for {dependency.name}")
            upstream = _upstream(conn, dependency)
            found = judge(
                dependency.name,
                dependency.dependency_type,
                upstream,
                _consumed(conn, dependency),
                consume_repairs=dependency.consume_repairs,
                task_level=dependency.upstream_task_id is not None,
            )
            if self.policy is GatePolicy.WARN and found.result is not GateResult.SATISFIED:
                found = self._warned(dependency, found)
            elif not found.final:
                found = self._keep_waiting(conn, dependency, wait, found, now)
        if found.final:
            self.decided[key] = (found, upstream)
        return found

    def _unjudged(self, dependency: Dependency) -> Judgement | None:
        kind = f"{dependency.dependency_type} dependency on {dependency.name}"
        if self.bypass is not None and self.bypass.covers(dependency):
            return Judgement(
                GateResult.BYPASSED, f"{kind} bypassed: {self.bypass.reason}", UNJUDGED
            )
        if self.policy is GatePolicy.OFF:
            if dependency.dependency_type is DependencyType.FAILURE:
                return Judgement(GateResult.UNSATISFIED, f"{kind} {GATES_OFF_FAILURE}", UNJUDGED)
            return Judgement(GateResult.BYPASSED, f"{kind} counts as met: {GATES_OFF}", UNJUDGED)
        if not self.backfill:
            return None
        if dependency.dependency_type is DependencyType.FAILURE:
            return Judgement(GateResult.UNSATISFIED, f"{BACKFILL_FAILURE} ({kind})", UNJUDGED)
        return Judgement(
            GateResult.BYPASSED,
            f"{kind} counts as met on a backfill date; backfills judge no other pipeline's runs",
            UNJUDGED,
        )

    def _warned(self, dependency: Dependency, found: Judgement) -> Judgement:
        if dependency.dependency_type is DependencyType.FAILURE:
            # A FAILURE edge triggers on an upstream's failure: counted as met it would run the
            # task after every success, so it is judged once and not waited for.
            return Judgement(
                GateResult.UNSATISFIED, f"{found.reason} (not waited for: {GATES_WARN})"
            )
        reason = (
            f"{dependency.dependency_type} dependency on {dependency.name} is not met "
            f"({found.reason}), counted as met: {GATES_WARN}"
        )
        log.warning("run %s: %s", self.run_id, reason)
        return Judgement(GateResult.BYPASSED, reason, UNJUDGED)

    def skip_reason(self, task_id: int, planned: str) -> str:
        """Why a skipped task was skipped: a backfill's unjudged FAILURE edge says so itself."""
        unmet = [
            name
            for (task, name), (judgement, _) in self.decided.items()
            if task == task_id and judgement.reason.startswith(BACKFILL_FAILURE)
        ]
        if not unmet:
            return planned
        return f"skipped because {BACKFILL_FAILURE}: {', '.join(sorted(unmet))}"

    def _keep_waiting(
        self,
        conn: EngineConnection,
        dependency: Dependency,
        wait: OpenWait | None,
        found: Judgement,
        now: datetime,
    ) -> Judgement:
        if wait is None:
            start_wait(
                conn,
                self.run_id,
                dependency.task_id,
                next_in_seconds=next_look_seconds(1),
                wait_seconds=self.wait_minutes * 60,
                reason=found.reason,
            )
            return found
        if now >= (wait.wait_until or now):
            return timed_out(dependency.name, self.wait_minutes, found)
        look_again(
            conn,
            wait.gate_wait_id,
            next_in_seconds=next_look_seconds(wait.looks + 1),
            reason=found.reason,
        )
        return found

    def record(self, conn: EngineConnection, dependencies: Iterable[Dependency]) -> None:
        """Record the decisions that admitted or skipped what these dependencies gate."""
        for dependency in dependencies:
            decided = self.decided.get((dependency.task_id, dependency.name))
            if decided is None:
                continue  # not needed: the task's condition was met without it
            judgement, upstream = decided
            satisfied = judgement.result is GateResult.SATISFIED
            decision = Decision(
                task_id=dependency.task_id,
                pipeline_dependency_id=dependency.pipeline_dependency_id,
                task_dependency_id=dependency.task_dependency_id,
                selected_run_id=upstream.run_id if satisfied else None,
                selected_task_run_id=upstream.task_run_id if satisfied else None,
                selected_revision=upstream.revision if satisfied else None,
                result=judgement.result.value,
                reason=judgement.reason,
            )
            record_decision(conn, self.run_id, decision, SYSTEM)


def outcome_of(judgement: Judgement) -> TaskOutcome | None:
    """The upstream's outcome as the run's graph sees it: None while the gate waits."""
    if not judgement.final:
        return None
    # A gate that gave up has no upstream outcome: it reads as skipped upstream.
    return judgement.outcome or TaskOutcome(TaskRunStatus.SKIPPED)


def _upstream(conn: EngineConnection, dependency: Dependency) -> Upstream:
    run = upstream_run(conn, dependency.upstream_pipeline_id)
    if run is None:
        return Upstream(None, None, 1, 0)
    upstream = Upstream(
        run_id=run.pipeline_run_id,
        run_status=run.status,
        revision=run.revision,
        rows_written=run.rows_written,
    )
    if dependency.upstream_task_id is None:
        return upstream
    task = upstream_task_run(conn, run.pipeline_run_id, dependency.upstream_task_id)
    if task is None:
        return upstream
    return Upstream(
        upstream.run_id,
        upstream.run_status,
        upstream.revision,
        upstream.rows_written,
        task_run_id=task.task_run_id,
        task_status=task.status,
        task_rows=task.rows_written,
    )


def _consumed(conn: EngineConnection, dependency: Dependency) -> Consumed | None:
    found = last_consumption(conn, dependency.task_dependency_id, dependency.pipeline_dependency_id)
    return None if found is None else Consumed(found.pipeline_run_id, found.revision)
