"""The overseer: one leader that turns schedules into runs and drives every live run.

Each pass reconciles expired leases, retires silent workers, creates runs for due schedule
ticks (those once per poll interval), admits QUEUED runs, plans the IN-PROGRESS runs that have
news (queuing ready attempts within limits), hands due attempts to its pool, settles what
ended, and finalizes settled runs. It then waits for a notification, a child's exit, the poll
interval or a stop. Its working set is the live runs and their graphs only; after a restart
it is rebuilt from the tables.

A pass costs what its news costs, not what the live runs number. QUEUED runs whose pipelines
have no gates are admitted together, in one statement; those with gates are judged one by one.
A pass steps the runs the notifications name (PostgreSQL), the runs new to it, and a bounded
sweep of the runs looked at least recently, which catches what no notification names (a gate's
next look, a retry's delay, a pause lifted, SQLite's missing notifications). What a pass's time
budget leaves waits for the next pass, which starts at once.

When the Engine DB stops answering (a restart, dropped connections), it keeps its task
processes running and tries again with backoff; their leases hold meanwhile, or the pool
stops them before they run out.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import suppress
from itertools import islice

from etl_craft import __version__
from etl_craft.config.alerts import Alerts
from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import SYSTEM, Actor, ActorKind
from etl_craft.core.enums import RunStatus, SlotKind
from etl_craft.core.errors import (
    EngineDBError,
    MetadataError,
    RunStateError,
    StaleTransitionError,
)
from etl_craft.core.time import utc_now
from etl_craft.enginedb.backoff import Backoff, until_reachable
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.events import (
    AttemptChanged,
    Event,
    Listener,
    RunChanged,
    TaskRunChanged,
    changes_a_plan,
)
from etl_craft.enginedb.leadership import Leadership, LeadershipLostError, current_tenure
from etl_craft.enginedb.overseers import (
    LiveRun,
    active_overseer,
    beat_overseer,
    latest_metadata_change,
    live_runs,
    register_overseer,
    runs_of_news,
    stop_overseer,
)
from etl_craft.enginedb.runs import RunRow
from etl_craft.enginedb.transitions import (
    admit_runs,
    mark_silent_workers_gone,
    skip_run,
)
from etl_craft.enginedb.workers import SILENT_INTERVALS
from etl_craft.operations.alerts.raising import raise_alerts
from etl_craft.operations.cloning.schedule import ScheduledClone
from etl_craft.operations.retention.daily import DailyPurge
from etl_craft.operations.runs.downstream_reruns import carry_on_downstream_reruns
from etl_craft.operations.validate.blocking import BlockedPipeline, blocked_pipelines
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
# A pass steps runs with news until this much time went by (at least one run); the rest waits
# for the next pass, which starts at once, so housekeeping, admission and the pool keep pace.
PASS_BUDGET_SECONDS = 0.1
# Runs without news looked at again each pass, those looked at least recently first: while a
# server drives no more, every pass looks at every run, as it did before passes had news.
SWEEP_RUNS = 16


class Overseer:
    def __init__(
        self,
        engine: EngineDB,
        settings: OwnerSettings,
        pool: Pool,
        ledger: LedgerLookup | None = None,
        daily_purge: DailyPurge | None = None,
        alerts: Alerts | None = None,
        clone_schedule: ScheduledClone | None = None,
    ) -> None:
        self.engine, self.settings, self.pool, self.ledger = engine, settings, pool, ledger
        self.daily_purge = daily_purge
        self.clone_schedule = clone_schedule
        self.alerts = alerts or Alerts()
        self.owner = settings.owner_id
        self.stopping = threading.Event()
        self.runs = RunSupervisor(engine, settings, pool, OVERSEER)
        self.admissions: dict[int, Admission] = {}
        # Runs to look at, in the order their news came (a dict as an ordered set).
        self.news: dict[int, None] = {}
        # Driven runs, the one looked at least recently first: what the sweep takes.
        self.looked: dict[int, None] = {}
        # Runs that may have attempts waiting for a free slot of the pool, oldest first.
        self.starved: dict[int, None] = {}
        self.look_seconds = 0.0  # what a look at a run took lately (a moving average)
        # Pipelines whose graph cannot be built, by id: never admitted, never driven.
        self.blocked: dict[int, BlockedPipeline] = {}
        self.blocked_version: int | None = None  # the metadata version they were judged at
        self.unbuildable: dict[int, str] = {}  # runs already logged as not drivable, and why
        self.next_housekeeping = 0.0
        self.next_confirm = 0.0
        # The Engine DB for leader-only writes: each checks the leadership epoch first.
        self.leader = engine
        # Since when the Engine DB has answered without a break: a worker's silence counts
        # only from then, as its heartbeats could not reach an Engine DB that was down.
        self.answering_since = time.monotonic()

    def serve(self, *, standby: bool = False) -> None:
        """Lead until stopped. When another overseer leads: refuse naming it, or with
        ``standby`` wait and take over the moment its lock is released (or its process dies).
        One that finds it no longer leads (another took the lead while its lock was gone)
        stops leader work and stands by, whatever ``standby`` says."""
        leadership = Leadership(self.engine, self.owner)
        self.leader = self.engine.fenced(leadership.fence)
        while self._take_lead(leadership, standby=standby):
            try:
                self._serve_as_leader(leadership)
                return
            except LeadershipLostError as lost:
                log.error("%s", lost)
                with suppress(EngineDBError):
                    stop_overseer(self.engine, OVERSEER, self.owner)
                standby = True
            finally:
                leadership.release()

    def _take_lead(self, leadership: Leadership, *, standby: bool) -> bool:
        """Wait until this overseer leads (True) or is stopped (False); while the Engine DB
        can't be reached, try again with backoff whatever ``standby`` says. Without it, refuse
        naming the leader when another one leads."""
        waiting = False
        while not self.stopping.is_set():
            led = until_reachable(
                lambda: leadership.acquire(OVERSEER),
                what=f"overseer {self.owner}",
                stopping=self.stopping,
            )
            if led is None:
                return False
            if led:
                return True
            refusal = until_reachable(self._refusal, what=f"overseer {self.owner}")
            if not standby:
                raise RunStateError(str(refusal))
            if not waiting:
                log.info("standing by: %s", refusal)
            waiting = True
            self.stopping.wait(self.settings.poll_seconds)
        return False

    def _serve_as_leader(self, leadership: Leadership) -> None:
        OVERSEER_LEADING.set(1)
        try:
            # Registered before the fork server's imports (seconds on a busy host): a server
            # started meanwhile names this leader rather than no one.
            with self.leader.transaction(OVERSEER) as conn:
                register_overseer(conn, self.owner, __version__)
            if self.pool.submits:
                prepare_task_start()
            log.info(
                "overseer %s leads at epoch %s (etl-craft %s)",
                self.owner,
                leadership.epoch,
                __version__,
            )
            heartbeat = self.runs.heartbeat(lambda conn: beat_overseer(conn, self.owner))
            with heartbeat, Listener(self.engine) as listener:
                try:
                    self._lead(listener, leadership)
                finally:
                    self._shut_down()
            stop_overseer(self.engine, OVERSEER, self.owner)
        finally:
            OVERSEER_LEADING.set(0)

    def stop(self) -> None:
        self.stopping.set()

    def _lead(self, listener: Listener, leadership: Leadership) -> None:
        full, backoff = True, Backoff()
        while not self.stopping.is_set():
            try:
                if time.monotonic() >= self.next_confirm:
                    # Before anything this pass writes: a restart may have taken the lock.
                    leadership.confirm(OVERSEER)
                    self.next_confirm = time.monotonic() + self.settings.poll_seconds
                self.run_pass(full=full)
                if backoff.succeeded():
                    log.info("the Engine DB answers again; the overseer goes on")
                if not self.stopping.is_set():
                    full = self._wait(listener)
            except EngineDBError as error:
                full = True
                self.next_confirm = 0.0  # the lock's session may have gone with it
                self.news.update(
                    dict.fromkeys(self.runs.drivers)
                )  # news may have been lost with it
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
        """One pass; unless ``full``, the live runs are not read again (only news of the runs
        this overseer drives woke it): it steps the runs with news and its sweep."""
        began = time.monotonic()
        # Leases, workers and schedules move on the scale of seconds: once per poll interval is
        # enough, while a wake-up from a completion only needs the runs looked at again.
        if began >= self.next_housekeeping:
            self._housekeeping()
            self.next_housekeeping = time.monotonic() + self.settings.poll_seconds
            full = True
        if full:
            # Before reading the live runs, so that a run reopened for its next stage is driven now.
            carry_on_downstream_reruns(self.leader)
            with self.engine.read() as conn:
                runs = list(live_runs(conn))
            self._look_at_runs(runs)
        self._step(began)
        self.pool.poll()

    def _step(self, began: float) -> None:
        """Step the runs with news, then those starved of slots while some are free, while the
        pass's budget lasts; then the sweep, at least one run of it, more while the budget
        lasts. A run the budget leaves keeps its place for the next pass."""
        stepped: set[int] = set()

        def spent() -> bool:
            # Stop before a look that would likely end past the budget, not after it.
            ends = time.monotonic() + self.look_seconds - began
            return bool(stepped) and ends > PASS_BUDGET_SECONDS

        for run_id in [*self.news, *(run for run in self.starved if run not in self.news)]:
            if self.stopping.is_set() or spent():
                break
            if run_id not in self.news and not any(self._free_slots().values()):
                continue
            self._look(run_id)
            stepped.add(run_id)
        for swept, run_id in enumerate(self._sweep(stepped)):
            if self.stopping.is_set() or (swept and spent()):
                break
            self._look(run_id)

    def _look(self, run_id: int) -> None:
        self.news.pop(run_id, None)
        began = time.monotonic()
        self._drive(run_id)
        self.look_seconds += (time.monotonic() - began - self.look_seconds) / 8
        self.looked.pop(run_id, None)
        if run_id not in self.runs.drivers:
            self.starved.pop(run_id, None)
            return
        self.looked[run_id] = None  # now the one looked at most recently
        if self.pool.submits and not all(self._free_slots().values()):
            # Its pool had no slot of some kind left: attempts of it may wait for one.
            self.starved.setdefault(run_id)
        else:
            self.starved.pop(run_id, None)

    def _free_slots(self) -> dict[SlotKind, bool]:
        """Whether the pool has a free slot, by the kinds it has slots of (none: no pool)."""
        capacity = self.pool.capacity()
        return {kind: capacity.free(kind) > 0 for kind, slots in capacity.slots.items() if slots}

    def _sweep(self, stepped: set[int]) -> list[int]:
        """Up to SWEEP_RUNS driven runs not stepped in this pass, least recently looked first."""
        for run_id in [run for run in self.looked if run not in self.runs.drivers]:
            del self.looked[run_id]  # forgotten since
        return list(islice((run for run in self.looked if run not in stepped), SWEEP_RUNS))

    def _housekeeping(self) -> None:
        report = reconcile(self.leader, self.ledger, self.settings.lease_seconds)
        for settled in report.settled:
            log.info("reconciled attempt %s: %s", settled.attempt_id, settled.message)
        silence = SILENT_INTERVALS * WORKER_HEARTBEAT_SECONDS
        if self.engine.dialect == "postgresql" and self._answered_for(silence):
            with self.leader.transaction(OVERSEER) as conn:
                gone = mark_silent_workers_gone(conn, WORKER_HEARTBEAT_SECONDS)
            for worker in gone:
                log.warning("worker %s went silent: marked GONE", worker)
        self._find_blocked()
        for tick in create_due_runs(self.leader, utc_now()):
            log.info("schedule of %s: run %s %s", tick.pipeline_code, tick.run_id, tick.outcome)
        if self.daily_purge is not None and self.daily_purge.start_if_due(
            self.leader, OVERSEER, utc_now()
        ):
            log.info("the daily purge of history past its retention started")
        if self.clone_schedule is not None and self.clone_schedule.start_if_due(time.monotonic()):
            log.info("the scheduled clone of the AUD_ tables into the warehouse started")
        raise_alerts(self.leader, self.alerts, OVERSEER, self.settings.lease_seconds)

    def _find_blocked(self) -> None:
        """Judge every pipeline's metadata again, once it changed (a read of every project's
        metadata and validate's checks: too much to repeat each poll at thousands of pipelines)."""
        with self.engine.read() as conn:
            version = latest_metadata_change(conn)
            if version is not None and version == self.blocked_version:
                return
            found = {blocked.pipeline_id: blocked for blocked in blocked_pipelines(conn)}
        self.blocked_version = version
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
        """Forget the runs others hold, hold back those of blocked pipelines, admit what may
        start, and note the runs new to this overseer (and those gone from the live ones)."""
        active = {run.pipeline_id for run in runs if run.status is RunStatus.IN_PROGRESS}
        queued: list[LiveRun] = []
        for run in runs:
            if self.stopping.is_set():
                return
            if not run.free_for(self.owner):
                self._forget(run.pipeline_run_id)
            elif run.pipeline_id in self.blocked:
                self._hold_back(run, self.blocked[run.pipeline_id])
            elif run.status is RunStatus.QUEUED:
                queued.append(run)
            elif run.pipeline_run_id not in self.runs.drivers:
                self.news.setdefault(run.pipeline_run_id)  # claimed and driven when stepped
        self._admit_all(queued, active)
        live = {run.pipeline_run_id for run in runs}
        for run_id in self.runs.drivers:
            if run_id not in live:
                self.news.setdefault(run_id)  # ended or taken elsewhere: a look forgets it

    def _admit_all(self, queued: list[LiveRun], active: set[int]) -> None:
        """Admit, most urgent first, one QUEUED run of each pipeline without one in progress
        (QUEUE overlap): those without pipeline gates together, in one transaction; those with
        gates each through its gates, judged once a pass."""
        together: list[LiveRun] = []
        for run in queued:
            if self.stopping.is_set():
                return
            if run.pipeline_id in active:
                continue  # a QUEUED sibling waits while its pipeline has a run in progress
            if not run.gated:
                together.append(run)
                active.add(run.pipeline_id)
            elif self._admit(run):
                active.add(run.pipeline_id)
        if not together:
            return
        with self.leader.transaction(SYSTEM) as conn:
            admitted = set(admit_runs(conn, [run.pipeline_run_id for run in together], SYSTEM))
        for run in together:
            if run.pipeline_run_id in admitted:
                self.admissions.pop(run.pipeline_run_id, None)
                self._admitted(run, RunStatus.IN_PROGRESS)
                self.news.setdefault(run.pipeline_run_id)
            # Otherwise a foreground caller admitted, skipped or cancelled it meanwhile.

    def _hold_back(self, run: LiveRun, blocked: BlockedPipeline) -> None:
        """A queued run of a pipeline that cannot run is skipped with why; one in progress
        (its metadata broke after it started) is left to the operator to fix or cancel."""
        self._forget(run.pipeline_run_id)
        if run.status is RunStatus.QUEUED:
            try:
                with self.leader.transaction(SYSTEM) as conn:
                    skip_run(conn, run.pipeline_run_id, SYSTEM, message=blocked.reason)
            except StaleTransitionError:
                return  # a foreground caller took it meanwhile
            log.warning("run %s skipped: %s", run.pipeline_run_id, blocked.reason)
        elif self.unbuildable.get(run.pipeline_run_id) != blocked.reason:
            self.unbuildable[run.pipeline_run_id] = blocked.reason
            log.warning(
                "run %s is not driven: %s. Cancel it (etl-craft cancel --pipeline %s "
                "--run %s --reason ...) or fix the metadata and it goes on",
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
                self.leader,
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
        self._admitted(run, decided)
        if decided is RunStatus.IN_PROGRESS:
            self.news.setdefault(run.pipeline_run_id)
            return True
        return False

    def _admitted(self, run: LiveRun, decided: RunStatus) -> None:
        log.info("run %s admitted as %s", run.pipeline_run_id, decided)
        if run.queued_at is not None:
            waited = (utc_now() - run.queued_at).total_seconds()
            admitted = decided is RunStatus.IN_PROGRESS
            ADMISSION_SECONDS.labels("admitted" if admitted else "skipped").observe(
                max(0.0, waited)
            )

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
        """Until a notification that may change a plan, a child's exit, a stop or the poll (not
        at all while runs with news wait for a look); True when every live run needs a look
        (the poll, or news of a run), False when only the runs it drives do (news of their
        attempts, a child's exit)."""
        deadline = time.monotonic() + self.settings.poll_seconds
        full = True
        while not self.stopping.is_set():
            left = 0.0 if self.news else deadline - time.monotonic()
            if left <= 0 and not self.news:
                break
            # Read each time: a listener that lost its connection has another one, or none.
            descriptor = listener.descriptor()
            self.pool.wait(left, () if descriptor is None else (descriptor,))
            if not listener.pending():  # a child, the time, a stop, or news waiting woke it
                full = time.monotonic() >= deadline
                break
            # Attempts queued, claimed or started change no plan: wait on through those.
            news = listener.drain(changes_a_plan)
            if news:
                full = self._note(news)
                break
        # What came meanwhile: news in it is noted, the rest changes no plan.
        full = self._note([event for event in listener.drain() if changes_a_plan(event)]) or full
        self.pool.poll()
        return full

    def _note(self, events: list[Event]) -> bool:
        """Note the driven runs these notifications name as news; True when the live runs need
        reading again: a run was created, ended (a QUEUED sibling may start) or changed that
        this overseer does not know of, or a notification is not a transition's (it may concern
        anything, as may those a lost connection missed: then every driven run has news). A
        run it admitted itself starting, or an attempt's news, needs no such read."""
        runs: set[int] = set()
        attempts: set[int] = set()
        task_runs: set[int] = set()
        anything = full = False
        for event in events:
            if isinstance(event, AttemptChanged):
                attempts.add(event.attempt_id)
            elif isinstance(event, TaskRunChanged):
                task_runs.add(event.task_run_id)
            elif isinstance(event, RunChanged):
                runs.add(event.run_id)
                known = event.run_id in self.runs.drivers or event.run_id in self.news
                full = full or not known or event.status is not RunStatus.IN_PROGRESS
            else:  # a worker came or went (the pool's capacity), or a plain wake-up
                anything = full = True
        # The driven runs know their task runs and attempts: only news of others is looked up.
        for run_id, driver in self.runs.drivers.items():
            its_task_runs, its_attempts = (
                driver.task_run_ids & task_runs,
                driver.attempt_ids & attempts,
            )
            if its_task_runs or its_attempts:
                runs.add(run_id)
                task_runs -= its_task_runs
                attempts -= its_attempts
        if attempts or task_runs:
            with self.engine.read() as conn:
                runs |= runs_of_news(conn, attempts, task_runs)
        if anything:
            runs |= set(self.runs.drivers)
        for run_id in runs:
            if run_id in self.runs.drivers:  # new runs are found by the full pass that follows
                self.news.setdefault(run_id)
        return full

    def _shut_down(self) -> None:
        """Admit and start nothing more; give local attempts the grace, then stop them, and let
        go of every run (their leases too, for whoever leads next)."""
        try:
            self.runs.grace()
            self.pool.release("the overseer stopped leading before the attempt ended")
            for run_id in self.runs.held:
                self._forget(run_id)
        except EngineDBError as error:
            # What was not recorded or released is settled by the next leader's reconciliation
            # once the leases run out.
            log.warning("the overseer could not let go of everything it held: %s", error)
        self.news.clear()
        self.looked.clear()
        self.starved.clear()
        self.admissions.clear()

    def _refusal(self) -> str:
        with self.engine.read() as conn:
            active = active_overseer(conn)
            tenure = current_tenure(conn) if active is None else None
        if active is None and tenure is not None:
            return (
                f"overseer {tenure.overseer_id} holds leadership epoch {tenure.epoch} (since "
                f"{tenure.taken_at}); only one server runs at a time. Stop it first, or let "
                "this one stand by"
            )
        if active is None:
            return "another overseer holds the leadership lock; only one server runs at a time"
        return (
            f"overseer {active.overseer_id} on {active.host} (pid {active.pid}, last heartbeat "
            f"{active.heartbeat_at}) is active; only one server runs at a time. Stop it first, "
            "or let this one stand by and start it again when that one is gone"
        )
