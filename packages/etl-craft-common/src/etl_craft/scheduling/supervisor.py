"""Supervising one run in the foreground: an overseer for one run, on this machine.

Each pass reads the run, plans (skips, starts, retries, or the end), applies the plan through
transitions, starts due attempts within the pipeline's limit, then waits for a child to exit,
a deadline or the poll interval. Everything it knows comes from the tables, so a supervisor
started after a crash picks up where the last one stopped.
"""

from __future__ import annotations

import logging
import os
import select
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from etl_craft.core.actor import SYSTEM, Actor
from etl_craft.core.enums import LIVE_ATTEMPT_STATUSES, AttemptStatus, RunStatus
from etl_craft.core.errors import RunStateError, StaleTransitionError, WaitingError
from etl_craft.core.faults import fault_point
from etl_craft.core.graph import TaskOutcome
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.controls import read_controls
from etl_craft.enginedb.runs import (
    RunRow,
    TaskRunRow,
    queued_attempts,
    read_pipeline_shape,
    read_run,
    read_task_runs,
)
from etl_craft.enginedb.transitions import (
    cancel_queued_attempt,
    cancel_run,
    claim_attempt,
    claim_run_lease,
    create_task_run,
    finish_run,
    queue_attempt,
    release_run_lease,
    skip_task_run,
)
from etl_craft.runtime.heartbeat import Heartbeat
from etl_craft.runtime.identity import owner_id
from etl_craft.runtime.launcher import (
    LaunchSpec,
    RunningAttempt,
    launch,
    settle_exit,
    stop_for_cancel,
    stop_for_timeout,
)
from etl_craft.runtime.logfile import attempt_log_path
from etl_craft.runtime.reconcile import LEDGERED, LedgerLookup
from etl_craft.scheduling.gatekeeper import Bypass, Dependency, Gatekeeper, outcome_of
from etl_craft.scheduling.gates import DEFAULT_WAIT_MINUTES
from etl_craft.scheduling.plan import Plan, TaskRunState, graph_state, plan, task_run_state
from etl_craft.scheduling.shape import RunShape, build_shape

log = logging.getLogger(__name__)
CANCELLED = "cancelled by an operator"


@dataclass(frozen=True)
class SupervisorSettings:
    engine_url: str
    config_path: Path | None
    profile: str | None
    logs_dir: Path
    default_retries: int = 0
    default_parallel_tasks: int = 4
    lease_seconds: float = 60.0
    heartbeat_seconds: float = 15.0
    poll_seconds: float = 1.0
    log_level: str = "INFO"
    gate_wait_minutes: float = DEFAULT_WAIT_MINUTES


class RunSupervisor:
    def __init__(
        self,
        engine: EngineDB,
        settings: SupervisorSettings,
        requested_by: Actor,
        ledger: LedgerLookup | None = None,
        bypass: Bypass | None = None,  # run --ignore-dependencies: outcomes don't matter
    ) -> None:
        self.engine, self.settings, self.requested_by = engine, settings, requested_by
        self.ledger, self.bypass = ledger, bypass
        self.ledgered: set[int] = set()
        self.owner = owner_id()
        self.running: dict[int, RunningAttempt] = {}
        self.only: frozenset[int] | None = None
        self.gates: Gatekeeper

    def supervise(self, run_id: int, only: frozenset[int] | None = None) -> RunRow:
        """Run ``run_id`` to its end, or only the tasks in ``only`` (run --task_code)."""
        self.only = only
        try:
            with self.engine.transaction(SYSTEM) as conn:
                claim_run_lease(
                    conn,
                    run_id,
                    SYSTEM,
                    owner_id=self.owner,
                    lease_seconds=self.settings.lease_seconds,
                )
        except StaleTransitionError:
            with self.engine.read() as conn:
                held = read_run(conn, run_id)
            raise supervised_elsewhere(held) from None
        heartbeat = Heartbeat(
            self.engine,
            SYSTEM,
            self.owner,
            self.settings.lease_seconds,
            self.settings.heartbeat_seconds,
            run_id,
            # An exited child's attempt is settled, or about to be: only live ones are renewed.
            lambda: [a for a, running in self.running.items() if running.exit_code() is None],
        )
        try:
            with heartbeat:
                return self._loop(run_id)
        finally:
            self._stop_all("the supervising etl-craft process stopped")
            with self.engine.transaction(SYSTEM) as conn:
                run = read_run(conn, run_id)
                if run.owner_id == self.owner:
                    release_run_lease(conn, run_id, SYSTEM, owner_id=self.owner)

    def _loop(self, run_id: int) -> RunRow:
        self.gates = Gatekeeper(self.engine, run_id, self.settings.gate_wait_minutes, self.bypass)
        with self.engine.read() as conn:
            run = read_run(conn, run_id)
            shape = build_shape(
                read_pipeline_shape(conn, run.pipeline_id), self.settings.default_retries
            )
        if self.bypass is not None:
            shape = shape.ignoring_outcomes(self.bypass.tasks)
        while True:
            ended = self._pass(run_id, shape)
            if ended is not None:
                return ended

    def _pass(self, run_id: int, shape: RunShape) -> RunRow | None:
        """One look at the tables and what follows from it; the run when supervision ends."""
        with self.engine.read() as conn:
            run = read_run(conn, run_id)
            rows = read_task_runs(conn, run_id)
            controls = read_controls(conn, run_id)
        if run.status.terminal:
            return run
        if run.status is not RunStatus.IN_PROGRESS:
            raise RunStateError(
                f"run {run_id} is {run.status}; it must be admitted before it can run"
            )
        if controls.cancel_pending:
            ended = self._cancel(run, rows)
            if ended is None:
                self._wait(run_id)
            return ended
        states = {task_id: task_run_state(row) for task_id, row in rows.items()}
        external = self._gate_outcomes(shape, states)
        decided = plan(shape.graph, states, shape.policies, shape.handlers, external)
        if controls.paused:
            if not self.running:
                log.warning("run %s stops here: its pipeline is paused", run_id)
                return run
            self._wait(run_id)
            return None
        if self.only is not None:
            decided = _restricted(decided, self.only)
            if not self.running and decided.idle:
                if self._only_settled(shape, states) and decided.outcome is None:
                    return run
                self._only_waiting(shape, states, queued=self._has_queued(run_id))
        if not decided.idle:
            self._apply(run, shape, decided)
            return None
        self._cancel_requested(rows)
        if decided.outcome is not None and not self.running:
            return self._finalize(run, decided.outcome, reopened=controls.reopened)
        self._dispatch(run, shape)
        self._wait(run_id)
        return None

    def _gate_outcomes(
        self, shape: RunShape, states: dict[int, TaskRunState]
    ) -> dict[int, TaskOutcome]:
        """Judge, when due, the gates of tasks that have not started; final ones become outcomes."""
        outcomes: dict[int, TaskOutcome] = {}
        waiting = [d for d in shape.external if d.task_id not in states]
        for dependency, judgement in self.gates.judge_all(waiting).items():
            outcome = outcome_of(judgement)
            if outcome is not None and dependency.upstream_task_id is not None:
                outcomes[dependency.upstream_task_id] = outcome
        return outcomes

    def _apply(self, run: RunRow, shape: RunShape, decided: Plan) -> None:
        with self.engine.transaction(SYSTEM) as conn:
            for skipped in decided.skip:
                task_id = skipped.task.task_id
                self.gates.record(conn, _gated(shape, task_id))
                reason = self.gates.skip_reason(task_id, skipped.reason)
                skip_task_run(conn, run.pipeline_run_id, task_id, SYSTEM, message=reason)
        for task in decided.start:
            settings = shape.tasks[task.task_id]
            with self.engine.transaction(self.requested_by) as conn:
                self.gates.record(conn, _gated(shape, task.task_id))
                task_run_id = create_task_run(
                    conn, run.pipeline_run_id, task.task_id, self.requested_by
                )
                queue_attempt(
                    conn,
                    task_run_id,
                    self.requested_by,
                    slot_kind=settings.slot_kind,
                    pool=settings.pool or run.default_pool,
                    priority=run.priority,
                )
        for retry in decided.retry:
            settings = shape.tasks[retry.task_id]
            with self.engine.transaction(SYSTEM) as conn:
                queue_attempt(
                    conn,
                    retry.task_run_id,
                    SYSTEM,
                    slot_kind=settings.slot_kind,
                    pool=settings.pool or run.default_pool,
                    priority=run.priority,
                    not_before=retry.not_before,
                )

    def _dispatch(self, run: RunRow, shape: RunShape) -> None:
        limit = run.max_parallel_tasks or self.settings.default_parallel_tasks
        with self.engine.read() as conn:
            queued = queued_attempts(conn, run.pipeline_run_id)
        now = utc_now()
        for attempt_id, task_id, not_before in queued:
            if len(self.running) >= limit:
                return
            if not_before is not None and not_before > now:
                continue
            settings = shape.tasks[task_id]
            with self.engine.transaction(SYSTEM) as conn:
                claim_attempt(
                    conn,
                    attempt_id,
                    SYSTEM,
                    owner_id=self.owner,
                    lease_seconds=self.settings.lease_seconds,
                )
            fault_point("after_claim")
            with self.engine.read() as conn:
                number = read_task_runs(conn, run.pipeline_run_id)[task_id].attempt_count
            where = (run.pipeline_code, run.pipeline_run_id, settings.code, number)
            path = attempt_log_path(self.settings.logs_dir, *where)
            self.running[attempt_id] = launch(
                LaunchSpec(
                    attempt_id=attempt_id,
                    owner_id=self.owner,
                    engine_url=self.settings.engine_url,
                    log_path=path,
                    timeout_seconds=settings.timeout_seconds,
                    config=self.settings.config_path,
                    profile=self.settings.profile,
                    log_level=self.settings.log_level,
                )
            )
            if settings.handler in LEDGERED:
                self.ledgered.add(attempt_id)
            fault_point("after_launch")

    def _wait(self, run_id: int) -> None:
        """Until a child exits, a time limit or a retry comes due, or the poll interval passes."""
        timeout = self.settings.poll_seconds
        for running in self.running.values():
            left = running.seconds_left()
            if left is not None:
                timeout = min(timeout, left)
        descriptors = {}
        for attempt_id, running in self.running.items():
            descriptors[running.process.exit_descriptor()] = attempt_id
        try:
            if descriptors:
                select.select(list(descriptors), [], [], timeout)
            else:
                time.sleep(min(timeout, 0.2))
        finally:
            for descriptor in descriptors:
                os.close(descriptor)
        self._reap()

    def _reap(self) -> None:
        for attempt_id, running in list(self.running.items()):
            if running.exit_code() is not None:
                ledger = self.ledger if attempt_id in self.ledgered else None
                settle_exit(self.engine, running, SYSTEM, ledger)
            elif running.overdue():
                stop_for_timeout(self.engine, running, SYSTEM)
            else:
                continue
            del self.running[attempt_id]

    def _cancel_requested(self, rows: dict[int, TaskRunRow]) -> None:
        for row in rows.values():
            if row.attempt_id in self.running and row.cancel_requested_at is not None:
                stop_for_cancel(self.engine, self.running.pop(row.attempt_id), SYSTEM, CANCELLED)

    def _only_settled(self, shape: RunShape, states: dict[int, TaskRunState]) -> bool:
        assert self.only is not None
        pending = graph_state(states, shape.policies).outcomes
        return all(task in pending and pending[task].status.terminal for task in self.only)

    def _has_queued(self, run_id: int) -> bool:
        with self.engine.read() as conn:
            return bool(queued_attempts(conn, run_id))

    def _only_waiting(
        self, shape: RunShape, states: dict[int, TaskRunState], *, queued: bool
    ) -> None:
        """Nothing of ``only`` can start: its upstreams have not settled yet."""
        assert self.only is not None
        if queued:
            return
        waiting = [task for task in self.only if task not in states]
        if waiting:
            names = ", ".join(shape.tasks[task].code for task in waiting)
            raise WaitingError(
                f"task(s) {names} can't start yet: their dependencies are not met in this run; "
                "nothing was recorded. Run the upstream tasks first, or the whole pipeline"
            )

    def _cancel(self, run: RunRow, rows: dict[int, TaskRunRow]) -> RunRow | None:
        """Stop what runs, drop what waits; end the run CANCELLED once no attempt is live."""
        for row in rows.values():
            if row.attempt_id is None or row.attempt_status is None:
                continue
            if row.attempt_status is AttemptStatus.QUEUED:
                with self.engine.transaction(SYSTEM) as conn:
                    cancel_queued_attempt(conn, row.attempt_id, SYSTEM, message=CANCELLED)
            elif row.attempt_id in self.running:
                stop_for_cancel(self.engine, self.running.pop(row.attempt_id), SYSTEM, CANCELLED)
        with self.engine.read() as conn:
            live = [
                r
                for r in read_task_runs(conn, run.pipeline_run_id).values()
                if r.attempt_status in LIVE_ATTEMPT_STATUSES
            ]
        if live:
            return None
        with self.engine.transaction(SYSTEM) as conn:
            cancel_run(conn, run.pipeline_run_id, SYSTEM, message=CANCELLED)
        with self.engine.read() as conn:
            return read_run(conn, run.pipeline_run_id)

    def _stop_all(self, reason: str) -> None:
        for attempt_id in list(self.running):
            stop_for_cancel(self.engine, self.running.pop(attempt_id), SYSTEM, reason)

    def _finalize(self, run: RunRow, status: RunStatus, *, reopened: bool) -> RunRow:
        sla = _sla(run, utc_now())
        with self.engine.transaction(SYSTEM) as conn:
            # A reopened run that ends SUCCESS is a repair: it publishes a new output revision,
            # which dependencies with CONSUME_REPAIRS consume again.
            finish_run(
                conn,
                run.pipeline_run_id,
                SYSTEM,
                status=status,
                sla_status=sla,
                new_revision=reopened and status is RunStatus.SUCCESS,
            )
            # What the run consumed comes from the decisions that admitted it, never re-judged.
            conn.run("gate_consume_decisions", pipeline_run_id=run.pipeline_run_id)
        fault_point("after_finalize")
        with self.engine.read() as conn:
            return read_run(conn, run.pipeline_run_id)


def supervised_elsewhere(run: RunRow) -> RunStateError:
    return RunStateError(
        f"run {run.pipeline_run_id} of {run.pipeline_code} is supervised by {run.owner_id} "
        f"(lease until {run.lease_expires_at}); follow it with etl-craft status, or wait for "
        "the lease to expire if that process is gone (etl-craft reconcile settles it then)"
    )


def _gated(shape: RunShape, task_id: int) -> list[Dependency]:
    return [dependency for dependency in shape.external if dependency.task_id == task_id]


def _restricted(decided: Plan, only: frozenset[int]) -> Plan:
    return Plan(
        skip=tuple(item for item in decided.skip if item.task.task_id in only),
        start=tuple(task for task in decided.start if task.task_id in only),
        retry=tuple(item for item in decided.retry if item.task_id in only),
        outcome=decided.outcome,
    )


def _sla(run: RunRow, now: datetime) -> str | None:
    if run.sla_minutes is None or run.start_date is None:
        return None
    return "MISSED" if (now - run.start_date).total_seconds() > run.sla_minutes * 60 else "MET"
