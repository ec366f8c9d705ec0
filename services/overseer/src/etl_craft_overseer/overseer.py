"""The overseer: one leader that turns schedules into runs and drives every live run.

Each pass reconciles expired leases, retires silent workers, creates runs for due schedule
ticks, admits QUEUED runs through non-blocking gates, plans every IN-PROGRESS run it may hold
(queuing ready attempts within limits), hands due attempts to its pool, settles what ended,
and finalizes settled runs. It then waits for a notification, a child's exit, the poll
interval or a stop. Its working set is the live runs and their graphs only; after a restart
it is rebuilt from the tables. When the Engine DB stops answering (a restart, dropped
connections), it keeps its task processes running and tries again with backoff; their
leases hold meanwhile, or the pool stops them before they run out.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import suppress

from etl_craft import __version__
from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import SYSTEM, Actor, ActorKind
from etl_craft.core.enums import RunStatus
from etl_craft.core.errors import EngineDBError, MetadataError, RunStateError, StaleTransitionError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.backoff import Backoff
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.events import Listener, changes_a_plan, of_runs
from etl_craft.enginedb.overseers import (
    Leadership,
    LiveRun,
    active_overseer,
    beat_overseer,
    live_runs,
    register_overseer,
    stop_overseer,
)
from etl_craft.enginedb.runs import RunRow
from etl_craft.enginedb.transitions import (
    mark_silent_workers_gone,
    skip_run,
)
from etl_craft.enginedb.workers import SILENT_INTERVALS
from etl_craft.operations.blocking import BlockedPipeline, blocked_pipelines
from etl_craft.operations.downstream_reruns import carry_on_downstream_reruns
from etl_craft.pools.base import Pool
from etl_craft.runtime.reconcile import LedgerLookup, reconcile
from etl_craft.runtime.starter import prepare_task_start
from etl_craft.scheduling.admission import Admission
from etl_craft.scheduling.driver import Step
from etl_craft.scheduling.schedules import create_due_runs
from etl_craft.supervision.runs import RunSupervisor
from etl_craft_overseer.overseer_series import (
    ADMISSION_SECONDS,
    OVERSEER_LEADING,
    PIPELINE_BLOCKING_FINDINGS,
    RUNS_ENDED,
)

log = logging.getLogger(__name__)
OVERSEER = Actor("overseer", ActorKind.ORCHESTRATOR)
WORKER_HEARTBEAT_SECONDS = 10.0


class Overseer:
    def __init__(
        self,
        engine: EngineDB,
        settings: OwnerSettings,
        pool: Pool,
        ledger: LedgerLookup | None = None,
    ) -> None:
        self.engine, self.settings, self.pool, self.ledger = engine, settings, pool, ledger
        self.owner = settings.owner_id
        self.stopping = threading.Event()
        self.runs = RunSupervisor(engine, settings, pool, OVERSEER)
        self.admissions: dict[int, Admission] = {}
        # Pipelines whose graph cannot be built, by id: never admitted, never driven.
        self.blocked: dict[int, BlockedPipeline] = {}
        self.unbuildable: dict[int, str] = {}  # runs already logged as not drivable, and why
        self.next_housekeeping = 0.0
        # Since when the Engine DB has answered without a break: a worker's silence counts
        # only from then, as its heartbeats could not reach an Engine DB that was down.
        self.answering_since = time.monotonic()

    def serve(self, *, standby: bool = False) -> None:
        """Lead until stopped. When another overseer leads: refuse naming it, or with
        ``standby`` wait and take over the moment its lock is released (or its process dies)."""
        leadership = Leadership(self.engine)
        if not leadership.acquire():
            if not standby:
                raise RunStateError(self._refusal())
            log.info("standing by: %s", self._refusal())
            while not leadership.acquire():
                if self.stopping.wait(self.settings.poll_seconds):
                    return
        OVERSEER_LEADING.set(1)
        try:
            if self.pool.submits:
                prepare_task_start()
            with self.engine.transaction(OVERSEER) as conn:
                register_overseer(conn, self.owner, __version__)
            log.info("overseer %s leads (etl-craft %s)", self.owner, __version__)
            heartbeat = self.runs.heartbeat(lambda conn: beat_overseer(conn, self.owner))
            with heartbeat, Listener(self.engine) as listener:
                self._lead(listener)
                self._shut_down()
            stop_overseer(self.engine, OVERSEER, self.owner)
        finally:
            OVERSEER_LEADING.set(0)
            leadership.release()

    def stop(self) -> None:
        self.stopping.set()

    def _lead(self, listener: Listener) -> None:
        full, backoff = True, Backoff()
        while not self.stopping.is_set():
            try:
                self.run_pass(full=full)
                if backoff.succeeded():
                    log.info("the Engine DB answers again; the overseer goes on")
                if not self.stopping.is_set():
                    full = self._wait(listener)
            except EngineDBError as error:
                full = True
                # Set on every failure, not once the Engine DB is back: the first pass that
                # succeeds again would otherwise count the outage as the workers' silence.
                self.answering_since = time.monotonic()
                self._unreachable(error, backoff.failed())

    def _unreachable(self, error: EngineDBError, delay: float) -> None:
        """The Engine DB failed: keep the task processes running (their leases hold a while)
        and try again after ``delay``; the pool stops those whose leases would run out."""
        log.warning(
            "the overseer could not reach the Engine DB, retrying in %.1fs: %s", delay, error
        )
        with suppress(EngineDBError):
            self.pool.poll()  # stops what must be fenced before anything needs the Engine DB
        # Not pool.wait: a child that exited wakes it at once, and its outcome waits for the
        # Engine DB anyway, so it would retry hundreds of times a second. Only a stop or a
        # lease to fence ends this wait early.
        leases = self.pool.leases
        fence = None if leases is None else leases.seconds_to_fence()
        self.stopping.wait(delay if fence is None else min(delay, fence))

    def run_pass(self, *, full: bool = True) -> None:
        """One pass; unless ``full``, only the runs this overseer drives are looked at again
        (news of their attempts woke it), not every live run of the Engine DB."""
        # Leases, workers and schedules move on the scale of seconds: once per poll interval is
        # enough, while a wake-up from a completion only needs the runs looked at again.
        if time.monotonic() >= self.next_housekeeping:
            self._housekeeping()
            self.next_housekeeping = time.monotonic() + self.settings.poll_seconds
            full = True
        if full:
            # Before reading the live runs, so that a run reopened for its next stage is driven now.
            carry_on_downstream_reruns(self.engine)
            with self.engine.read() as conn:
                runs = list(live_runs(conn))
            self._look_at_runs(runs)
        else:
            for run_id in self.runs.held:
                if self.stopping.is_set():
                    break
                self._drive(run_id)
        self.pool.poll()

    def _housekeeping(self) -> None:
        report = reconcile(self.engine, self.ledger, self.settings.lease_seconds)
        for settled in report.settled:
            log.info("reconciled attempt %s: %s", settled.attempt_id, settled.message)
        silence = SILENT_INTERVALS * WORKER_HEARTBEAT_SECONDS
        if self.engine.dialect == "postgresql" and self._answered_for(silence):
            with self.engine.transaction(OVERSEER) as conn:
                gone = mark_silent_workers_gone(conn, WORKER_HEARTBEAT_SECONDS)
            for worker in gone:
                log.warning("worker %s went silent: marked GONE", worker)
        self._find_blocked()
        for tick in create_due_runs(self.engine, utc_now()):
            log.info("schedule of %s: run %s %s", tick.pipeline_code, tick.run_id, tick.outcome)

    def _find_blocked(self) -> None:
        with self.engine.read() as conn:
            found = {blocked.pipeline_id: blocked for blocked in blocked_pipelines(conn)}
        for pipeline_id, blocked in found.items():
            if self.blocked.get(pipeline_id) != blocked:
                log.warning("%s (project %s)", blocked.reason, blocked.project_code)
        PIPELINE_BLOCKING_FINDINGS.clear()
        for blocked in found.values():
            PIPELINE_BLOCKING_FINDINGS.labels(blocked.project_code, blocked.pipeline_code).set(
                len(blocked.findings)
            )
        self.blocked = found

    def _answered_for(self, seconds: float) -> bool:
        return time.monotonic() - self.answering_since >= seconds

    def _look_at_runs(self, runs: list[LiveRun]) -> None:
        active = {run.pipeline_id for run in runs if run.status is RunStatus.IN_PROGRESS}
        for run in runs:
            if self.stopping.is_set():
                return
            if not run.free_for(self.owner):
                self._forget(run.pipeline_run_id)
            elif run.pipeline_id in self.blocked:
                self._hold_back(run, self.blocked[run.pipeline_id])
            elif run.status is RunStatus.QUEUED:
                # A QUEUED sibling waits while its pipeline has a run in progress (QUEUE overlap).
                if run.pipeline_id not in active and self._admit(run):
                    active.add(run.pipeline_id)
            else:
                self._drive(run.pipeline_run_id)

    def _hold_back(self, run: LiveRun, blocked: BlockedPipeline) -> None:
        """A queued run of a pipeline that cannot run is skipped with why; one in progress
        (its metadata broke after it started) is left to the operator to fix or cancel."""
        self._forget(run.pipeline_run_id)
        if run.status is RunStatus.QUEUED:
            try:
                with self.engine.transaction(SYSTEM) as conn:
                    skip_run(conn, run.pipeline_run_id, SYSTEM, message=blocked.reason)
            except StaleTransitionError:
                return  # a foreground caller took it meanwhile
            log.warning("run %s skipped: %s", run.pipeline_run_id, blocked.reason)
        elif self.unbuildable.get(run.pipeline_run_id) != blocked.reason:
            self.unbuildable[run.pipeline_run_id] = blocked.reason
            log.warning(
                "run %s is not driven: %s. Cancel it (etl-craft cancel --pipeline_code %s "
                "--run-id %s --reason ...) or fix the metadata and it goes on",
                run.pipeline_run_id,
                blocked.reason,
                blocked.pipeline_code,
                run.pipeline_run_id,
            )

    def _admit(self, run: LiveRun) -> bool:
        """Judge the run's pipeline gate once; True when it was admitted."""
        admission = self.admissions.get(run.pipeline_run_id)
        if admission is None:
            admission = Admission(
                self.engine,
                run.pipeline_run_id,
                self.settings.gate_wait_minutes,
                policy=self.settings.dependency_gates,
            )
            self.admissions[run.pipeline_run_id] = admission
        try:
            decided = admission.try_admit()
        except StaleTransitionError:
            decided = None  # a foreground caller admitted or skipped it meanwhile
        if decided is None:
            return False
        del self.admissions[run.pipeline_run_id]
        log.info("run %s admitted as %s", run.pipeline_run_id, decided)
        if run.queued_at is not None:
            waited = (utc_now() - run.queued_at).total_seconds()
            admitted = decided is RunStatus.IN_PROGRESS
            ADMISSION_SECONDS.labels("admitted" if admitted else "skipped").observe(
                max(0.0, waited)
            )
        return decided is RunStatus.IN_PROGRESS

    def _drive(self, run_id: int) -> None:
        if run_id not in self.runs.drivers:
            try:
                if not self.runs.take(run_id):
                    return  # taken by a foreground caller since we looked
            except MetadataError as error:
                self._not_drivable(run_id, error)
                return
            log.info("driving run %s", run_id)
        step = Step.APPLIED
        while step is Step.APPLIED:
            try:
                step, row = self.runs.step(run_id)
            except MetadataError as error:
                self._forget(run_id)
                self._not_drivable(run_id, error)
                return
        if step is Step.ENDED:
            log.info("run %s of %s ended %s", run_id, row.pipeline_code, row.status)
            RUNS_ENDED.labels(row.project_code, row.status.value).inc()
            self._forget(run_id, row)

    def _not_drivable(self, run_id: int, error: MetadataError) -> None:
        """One run whose metadata cannot be read into a plan stops (its lease released); the
        server goes on."""
        if self.unbuildable.get(run_id) != str(error):
            self.unbuildable[run_id] = str(error)
            log.error("run %s is not driven: %s", run_id, error)

    def _forget(self, run_id: int, ended: RunRow | None = None) -> None:
        self.admissions.pop(run_id, None)
        self.runs.let_go(run_id, ended)

    def _wait(self, listener: Listener) -> bool:
        """Until a notification that may change a plan, a child's exit, a stop or the poll;
        True when every live run needs a look (the poll, or news of a run), False when only
        the runs this overseer drives do (news of their attempts, a child's exit)."""
        deadline = time.monotonic() + self.settings.poll_seconds
        full = True
        while not self.stopping.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            # Read each time: a listener that lost its connection has another one, or none.
            descriptor = listener.descriptor()
            self.pool.wait(left, () if descriptor is None else (descriptor,))
            if not listener.pending():  # a child, the time or a stop woke it
                full = time.monotonic() >= deadline
                break
            # Attempts queued, claimed or started change no plan: wait on through those.
            news = listener.drain(changes_a_plan)
            if news:
                full = any(of_runs(event) for event in news)
                break
        listener.drain()
        self.pool.poll()
        return full

    def _shut_down(self) -> None:
        """Admit and start nothing more; give local attempts the grace, then stop them."""
        self.runs.grace()
        self.pool.release("the overseer stopped before the attempt ended")
        for run_id in self.runs.held:
            self._forget(run_id)

    def _refusal(self) -> str:
        with self.engine.read() as conn:
            active = active_overseer(conn)
        if active is None:
            return "another overseer holds the leadership lock; only one server runs at a time"
        return (
            f"overseer {active.overseer_id} on {active.host} (pid {active.pid}, last heartbeat "
            f"{active.heartbeat_at}) is active; only one server runs at a time. Stop it first, "
            "or let this one stand by and start it again when that one is gone"
        )
