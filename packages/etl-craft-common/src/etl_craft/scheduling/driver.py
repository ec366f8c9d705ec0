"""Driving one run from the tables: plan it, queue what may start within limits, finalize it.

A driver never touches a process. It reads the run, plans (skips, starts, retries, or the
end), queues attempts through transitions, asks owners to stop attempts of a cancelled run,
and finalizes the run once everything settled. Whoever owns the attempts (the local pool of
the foreground CLI or of the overseer, or a worker agent) starts and stops the processes.
Everything comes from the tables, so a driver built after a crash picks up where the last one
stopped.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from datetime import datetime
from enum import StrEnum

from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import SYSTEM, Actor
from etl_craft.core.enums import LIVE_ATTEMPT_STATUSES, AttemptStatus, RunStatus, SlotKind
from etl_craft.core.errors import RunStateError, StaleTransitionError, WaitingError
from etl_craft.core.faults import fault_point
from etl_craft.core.graph import TaskOutcome
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.controls import read_controls
from etl_craft.enginedb.gate_records import consume_decisions
from etl_craft.enginedb.interventions import operator_decisions
from etl_craft.enginedb.limits import project_load
from etl_craft.enginedb.runs import (
    RunRow,
    TaskRunRow,
    read_pipeline_shape,
    read_run,
    read_task_runs,
)
from etl_craft.enginedb.transitions import (
    QueuedAttempt,
    cancel_queued_attempt,
    cancel_run,
    create_task_run,
    finish_run,
    queue_attempt,
    request_cancel,
    skip_task_run,
)
from etl_craft.scheduling.gatekeeper import Bypass, Dependency, Gatekeeper, outcome_of
from etl_craft.scheduling.plan import (
    Again,
    Plan,
    TaskRunState,
    engine_skipped,
    graph_state,
    plan,
    task_run_state,
)
from etl_craft.scheduling.shape import RunShape, TaskSettings, build_shape

log = logging.getLogger(__name__)
CANCELLED = "cancelled by an operator"


class Step(StrEnum):
    """What one look at a run found."""

    APPLIED = "APPLIED"  # a plan was applied: look again at once
    BUSY = "BUSY"  # attempts are queued or live; wait for one to change
    HOLD = "HOLD"  # paused or cancelling: live attempts finish, nothing new starts
    ENDED = "ENDED"  # the run is terminal
    PAUSED = "PAUSED"  # its pipeline is paused and nothing of it is live
    DONE = "DONE"  # the tasks a partial run was asked for have settled


class RunDriver:
    def __init__(
        self,
        engine: EngineDB,
        run_id: int,
        settings: OwnerSettings,
        requested_by: Actor,
        bypass: Bypass | None = None,  # run --ignore-dependencies: outcomes don't matter
        only: frozenset[int] | None = None,  # run --task: only these tasks
    ) -> None:
        self.engine, self.run_id, self.settings = engine, run_id, settings
        self.requested_by, self.bypass, self.only = requested_by, bypass, only
        self.gates = Gatekeeper(
            engine, run_id, settings.gate_wait_minutes, bypass, settings.dependency_gates
        )
        with engine.read() as conn:
            run = read_run(conn, run_id)
            shape = build_shape(
                read_pipeline_shape(conn, run.pipeline_id), settings.default_retries
            )
        self.shape = shape.ignoring_outcomes(bypass.tasks) if bypass is not None else shape
        # The run's task runs and attempts as its last step saw or made them: whoever drives it
        # can tell a notification of one of them is this run's news without asking.
        self.task_run_ids: set[int] = set()
        self.attempt_ids: set[int] = set()

    def step(self) -> tuple[Step, RunRow]:
        """One look at the tables and what follows from it."""
        with self.engine.read() as conn:
            run = read_run(conn, self.run_id)
            rows = read_task_runs(conn, self.run_id)
            controls = read_controls(conn, self.run_id)
        self.task_run_ids |= {row.task_run_id for row in rows.values()}
        self.attempt_ids |= {row.attempt_id for row in rows.values() if row.attempt_id is not None}
        if run.status.terminal:
            return Step.ENDED, run
        if run.status is not RunStatus.IN_PROGRESS:
            raise RunStateError(
                f"run {self.run_id} is {run.status}; it must be admitted before it can run"
            )
        live = [row for row in rows.values() if row.attempt_status in LIVE_ATTEMPT_STATUSES]
        if controls.cancel_pending:
            return self._cancel(run, live)
        shape = self.shape
        states = {task_id: task_run_state(row) for task_id, row in rows.items()}
        decided = plan(
            shape.graph,
            states,
            shape.policies,
            shape.handlers,
            self._gated(states),
            self._rejudged(states),
        )
        if controls.paused:
            if not live:
                log.warning("run %s stops here: its pipeline is paused", self.run_id)
                return Step.PAUSED, run
            return Step.HOLD, run
        if self.only is not None:
            decided = _restricted(decided, self.only)
            if not live and decided.idle:
                if self._only_settled(states) and decided.outcome is None:
                    return Step.DONE, run
                self._only_waiting(states)
        queued = 0 if decided.idle else self._apply(run, decided, len(live), states)
        if decided.skip or queued:
            # Queuing what the plan starts changes nothing else it decided: unless something
            # was skipped or held back by a limit, a new look would find the run busy.
            held_back = queued < len(decided.start) + len(decided.retry) + len(decided.again)
            return (Step.APPLIED if decided.skip or held_back else Step.BUSY), run
        if decided.outcome is not None and not live:
            return Step.ENDED, self._finalize(run, decided.outcome, reopened=controls.reopened)
        return Step.BUSY, run

    def _rejudged(self, states: dict[int, TaskRunState]) -> frozenset[int]:
        """The engine's skips in this run, which the plan judges again."""
        candidates = engine_skipped(states, ())
        if not candidates:
            return candidates  # the common case: no need to read the operators' decisions
        with self.engine.read() as conn:
            return engine_skipped(states, operator_decisions(conn, self.run_id))

    def _gated(self, states: dict[int, TaskRunState]) -> dict[int, TaskOutcome]:
        """Judge, when due, the gates of tasks that have not started; final ones become outcomes."""
        outcomes: dict[int, TaskOutcome] = {}
        waiting = [d for d in self.shape.external if d.task_id not in states]
        for dependency, judgement in self.gates.judge_all(waiting).items():
            outcome = outcome_of(judgement)
            if outcome is not None and dependency.upstream_task_id is not None:
                outcomes[dependency.upstream_task_id] = outcome
        return outcomes

    def _headroom(self, conn: EngineConnection, run: RunRow, live: int) -> tuple[int, int | None]:
        """How many more attempts may be queued (the pipeline's and the project's limits), and
        how many of them may hold a warehouse slot (None: no warehouse limit)."""
        room = max(0, (run.max_parallel_tasks or self.settings.default_parallel_tasks) - live)
        queries = self.settings.max_warehouse_queries
        if run.project_max_running_tasks is None and queries is None:
            return room, None  # no limit beyond the pipeline's: no need to count the project's
        load = project_load(conn, run.pipeline_run_id)
        project = load.room()
        room = max(0, room if project is None else min(room, project))
        return room, None if queries is None else max(0, queries - load.live_warehouse)

    def _apply(self, run: RunRow, decided: Plan, live: int, states: dict[int, TaskRunState]) -> int:
        """Skip, retry and start what the plan says and the limits allow, in one transaction
        (the limits are read in it too); how many attempts were queued."""
        shape = self.shape
        made: list[QueuedAttempt] = []
        # Marked once when the step only starts tasks (the common case), else as the engine's
        # until the requester's new task runs.
        system = bool(decided.skip or decided.retry or decided.again)
        with self.engine.transaction(SYSTEM if system else self.requested_by) as conn:

            def queue(
                task_run_id: int,
                settings: TaskSettings,
                actor: Actor,
                *,
                message: str | None = None,
                not_before: datetime | None = None,
            ) -> None:
                queued = queue_next_attempt(
                    conn, run, task_run_id, settings, actor, message=message, not_before=not_before
                )
                made.append(queued)

            for skipped in decided.skip:
                task_id = skipped.task.task_id
                self.gates.record(conn, _gated(shape, task_id))
                reason = self.gates.skip_reason(task_id, skipped.reason)
                skip_task_run(conn, run.pipeline_run_id, task_id, SYSTEM, message=reason)
            if not (decided.start or decided.retry or decided.again):
                return 0
            room, warehouse = self._headroom(conn, run, live)
            for again in decided.again:
                settings = shape.tasks[again.task.task_id]
                if room == 0 or not _fits(settings.slot_kind, warehouse):
                    continue
                queue(
                    again.task_run_id, settings, SYSTEM, message=self._again_reason(again, states)
                )
                room, warehouse = room - 1, _less(settings.slot_kind, warehouse)
            # Retries first: their task runs have waited longest. What doesn't fit waits
            # unqueued, holding nothing, and is planned again after the next completion.
            for retry in decided.retry:
                settings = shape.tasks[retry.task_id]
                if room == 0 or not _fits(settings.slot_kind, warehouse):
                    continue
                queue(retry.task_run_id, settings, SYSTEM, not_before=retry.not_before)
                room, warehouse = room - 1, _less(settings.slot_kind, warehouse)
            # New task runs are the requester's: their rows and changes carry its name.
            if system:
                conn.mark(self.requested_by, None)
            for task in decided.start:
                settings = shape.tasks[task.task_id]
                if room == 0 or not _fits(settings.slot_kind, warehouse):
                    continue
                self.gates.record(conn, _gated(shape, task.task_id))
                task_run_id = create_task_run(
                    conn, run.pipeline_run_id, task.task_id, self.requested_by
                )
                queue(task_run_id, settings, self.requested_by)
                room, warehouse = room - 1, _less(settings.slot_kind, warehouse)
        self.task_run_ids |= {attempt.task_run_id for attempt in made}
        self.attempt_ids |= {attempt.attempt_id for attempt in made}
        return len(made)

    def _again_reason(self, again: Again, states: dict[int, TaskRunState]) -> str:
        upstreams = [
            edge.depends_on_task_id for edge in self.shape.graph.dependencies_of(again.task.task_id)
        ]
        settled = ", ".join(
            f"{self.shape.tasks[upstream].code} {states[upstream].status}"
            for upstream in upstreams
            if upstream in states and upstream in self.shape.tasks
        )
        return f"runnable again: its dependencies are met now ({settled})"

    def _only_settled(self, states: dict[int, TaskRunState]) -> bool:
        assert self.only is not None
        pending = graph_state(states, self.shape.policies).outcomes
        return all(task in pending and pending[task].status.terminal for task in self.only)

    def _only_waiting(self, states: dict[int, TaskRunState]) -> None:
        """Nothing of ``only`` can start: its upstreams have not settled yet."""
        assert self.only is not None
        waiting = [task for task in self.only if task not in states]
        if waiting:
            names = ", ".join(self.shape.tasks[task].code for task in waiting)
            raise WaitingError(
                f"task(s) {names} can't start yet: their dependencies are not met in this run; "
                "nothing was recorded. Run the upstream tasks first, or the whole pipeline"
            )

    def _cancel(self, run: RunRow, live: list[TaskRunRow]) -> tuple[Step, RunRow]:
        """Drop what waits, ask owners to stop what runs; end CANCELLED once nothing is live."""
        dropped = 0
        for row in live:
            assert row.attempt_id is not None
            # An attempt may be claimed or end meanwhile: the next look sees what it became.
            with self.engine.transaction(SYSTEM) as conn, suppress(StaleTransitionError):
                if row.attempt_status is AttemptStatus.QUEUED:
                    cancel_queued_attempt(conn, row.attempt_id, SYSTEM, message=CANCELLED)
                    dropped += 1
                elif row.cancel_requested_at is None:
                    request_cancel(conn, row.attempt_id, SYSTEM)
        if dropped < len(live):
            return Step.HOLD, run
        with self.engine.transaction(SYSTEM) as conn:
            cancel_run(conn, run.pipeline_run_id, SYSTEM, message=CANCELLED)
        with self.engine.read() as conn:
            return Step.ENDED, read_run(conn, run.pipeline_run_id)

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
            consume_decisions(conn, run.pipeline_run_id)
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


def _fits(kind: SlotKind, warehouse: int | None) -> bool:
    return kind is not SlotKind.WAREHOUSE or warehouse is None or warehouse > 0


def _less(kind: SlotKind, warehouse: int | None) -> int | None:
    return warehouse - 1 if kind is SlotKind.WAREHOUSE and warehouse is not None else warehouse


def queue_next_attempt(
    conn: EngineConnection,
    run: RunRow,
    task_run_id: int,
    settings: TaskSettings,
    actor: Actor,
    *,
    message: str | None = None,
    not_before: datetime | None = None,
) -> QueuedAttempt:
    """Queue the task run's next attempt to its task's pool, else its project's, at its
    pipeline's priority."""
    return queue_attempt(
        conn,
        task_run_id,
        actor,
        slot_kind=settings.slot_kind,
        pool=settings.pool or run.default_pool,
        priority=run.priority,
        message=message,
        not_before=not_before,
    )


def _restricted(decided: Plan, only: frozenset[int]) -> Plan:
    return Plan(
        skip=tuple(item for item in decided.skip if item.task.task_id in only),
        start=tuple(task for task in decided.start if task.task_id in only),
        retry=tuple(item for item in decided.retry if item.task_id in only),
        outcome=decided.outcome,
        again=tuple(item for item in decided.again if item.task.task_id in only),
    )


def _sla(run: RunRow, now: datetime) -> str | None:
    if run.sla_minutes is None or run.start_date is None:
        return None
    return "MISSED" if (now - run.start_date).total_seconds() > run.sla_minutes * 60 else "MET"
