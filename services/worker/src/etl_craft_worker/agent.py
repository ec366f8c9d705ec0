"""The worker agent: claims QUEUED attempts of its pool and runs each in a task process.

One loop, one thread. Each pass beats when due (one statement renews the leases of every
attempt the worker owns and reads their cancel requests), settles children that exited or ran
out of time, then claims while slots of a kind are free. Between passes it waits for a child
to exit, a signal, a due beat, a time limit or the poll interval, whichever comes first.

What is no longer the worker's it stops at once: an attempt its beat no longer renews (recorded
LOST, or claimed by another owner), every attempt when it finds itself GONE (then it registers
again and goes on serving), and an attempt whose lease it could not renew for too long (the
Engine DB did not answer), before that lease runs out. An Engine DB that does not answer is
tried again with backoff; the task processes run on meanwhile.

SIGTERM or SIGINT drains: the worker is marked DRAINING, claims nothing new, waits up to
the drain time for its attempts, stops the rest (FAILED, retryable) and ends GONE. A second
signal ends the wait at once.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import time
from collections import Counter
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from functools import partial
from types import FrameType, TracebackType

from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import MAX_ACTOR_LENGTH, Actor, ActorKind
from etl_craft.core.enums import AttemptStatus, SlotKind, WorkerStatus
from etl_craft.core.errors import (
    ConfigurationError,
    EngineDBError,
    MetadataError,
    NotFoundError,
    StaleTransitionError,
)
from etl_craft.enginedb.attempts import AttemptInvocation, CancelRequest, read_invocations
from etl_craft.enginedb.backoff import Backoff, until_reachable
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.events import Listener, queued_attempt
from etl_craft.enginedb.runs import read_pipeline_shape
from etl_craft.enginedb.transitions import (
    ClaimedAttempt,
    beat_worker,
    claim_attempts,
    drain_worker,
    register_worker,
    retire_worker,
)
from etl_craft.enginedb.workers import AttemptEnd, WorkerRegistration, attempt_end
from etl_craft.runtime.attempt_owner import AttemptOwner, Ended
from etl_craft.runtime.bundles import ProjectFiles, TaskFiles
from etl_craft.runtime.identity import new_owner_id, owner_id
from etl_craft.runtime.launcher import LaunchSpec, claiming, launch_spec
from etl_craft.runtime.log_archive import AttemptLogs
from etl_craft.runtime.metrics import DISPATCH_SECONDS
from etl_craft.runtime.reconcile import LedgerLookup
from etl_craft.runtime.starter import prepare_task_start
from etl_craft.scheduling.shape import RunShape, TaskSettings, build_shape
from etl_craft_worker.worker_series import WORKER_CLAIMS, WORKER_ENDED, WORKER_RUNNING

log = logging.getLogger(__name__)
SHAPES_KEPT = 32  # runs whose task settings are kept between claims


@dataclass(frozen=True)
class WorkerSettings:
    pool: str
    slots: Mapping[SlotKind, int]
    drain_seconds: float
    owner: OwnerSettings  # its lease, heartbeat and poll, and what its task processes start with


class Signals:
    """SIGTERM and SIGINT counted for the loop, and a descriptor that wakes its select."""

    def __init__(self) -> None:
        self.count = 0
        self.wakeup, self._write = os.pipe()
        for descriptor in (self.wakeup, self._write):
            os.set_blocking(descriptor, False)

    def __enter__(self) -> Signals:
        self._previous = {
            signum: signal.signal(signum, self._count) for signum in (signal.SIGTERM, signal.SIGINT)
        }
        self._previous_fd = signal.set_wakeup_fd(self._write)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        signal.set_wakeup_fd(self._previous_fd)
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        os.close(self.wakeup)
        os.close(self._write)

    def clear(self) -> None:
        try:
            while os.read(self.wakeup, 512):
                pass
        except BlockingIOError:
            pass

    def _count(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1


class WorkerAgent:
    def __init__(
        self, engine: EngineDB, settings: WorkerSettings, ledger: LedgerLookup | None
    ) -> None:
        self.engine, self.settings = engine, settings
        self.worker_id = owner_id()
        self.actor = _actor(self.worker_id)
        # The attempts it runs: their task processes, leases and outcomes.
        self.attempts = AttemptOwner(
            engine,
            self.actor,
            self.worker_id,
            settings.owner.lease_seconds,
            ledger,
            title="worker",
            on_end=self._ended,
            # Its loop renews: a loop stuck on a statement gone silent sends no renewal at all.
            heartbeat_seconds=settings.owner.heartbeat_seconds,
            logs=AttemptLogs.configured(settings.owner.log_tail_bytes, settings.owner.log_store),
        )
        self.files = ProjectFiles(settings.owner)
        self.signals = Signals()
        self.signals_seen = 0
        self.drain_deadline: float | None = None
        self.next_beat = 0.0
        self.listener: Listener | None = None
        self.shapes: dict[int, RunShape] = {}
        # The slot kinds a claim last found nothing for; cleared when an attempt is queued or
        # time passes (a retry's delay ends), so that a pass after a child's exit costs no
        # claim while nothing new can be there.
        self.emptied: frozenset[SlotKind] | None = None

    def _identify(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self.actor = _actor(worker_id)
        self.attempts.become(worker_id, self.actor)

    def serve(self, registration: WorkerRegistration) -> None:
        """Register, run until drained, and end GONE whatever happens."""
        prepare_task_start()
        self._count_running()
        self._register(registration)
        try:
            with self.signals, Listener(self.engine) as listener:
                self.listener = listener
                self._loop()
        except BaseException:
            self.attempts.drain(f"worker {self.worker_id} stopped after an unexpected error")
            raise
        finally:
            self._gone()

    def _register(self, registration: WorkerRegistration) -> None:
        self.registration = registration

        def register() -> None:
            with self.engine.transaction(self.actor) as conn:
                register_worker(conn, registration)

        until_reachable(register, what=f"worker {self.worker_id}")
        log.info(
            "worker %s claims from pool %s with %s ingestion and %s warehouse slot(s)",
            self.worker_id,
            self.settings.pool,
            self.settings.slots[SlotKind.INGESTION],
            self.settings.slots[SlotKind.WAREHOUSE],
        )

    def _loop(self) -> None:
        backoff = Backoff()
        while True:
            try:
                if self._pass():
                    return
            except EngineDBError as error:
                # Children keep running and their leases hold for a while; retry the pass.
                delay = backoff.failed()
                log.warning("worker %s: %s; retrying in %.1fs", self.worker_id, error, delay)
                self._wait(outage=delay)
                continue
            if backoff.succeeded():
                log.info("worker %s reaches the Engine DB again", self.worker_id)
            self._wait()

    def _pass(self) -> bool:
        """One look at the children and the tables; True once the worker has drained."""
        try:
            if time.monotonic() >= self.next_beat:
                # Due again an interval later even if it fails: beats keep their own pace.
                self.next_beat = time.monotonic() + self.settings.owner.heartbeat_seconds
                self._beat()
        finally:
            self.attempts.fence()  # needs no Engine DB: it must happen while there is none
        self.attempts.record_fenced()
        self.attempts.settle()
        if self.signals.count > self.signals_seen:
            self._drain("it was asked to stop")  # the Engine DB may fail it: seen once done
            self.signals_seen = self.signals.count
        if self.drain_deadline is None:
            self._claim_while_free()
            return False
        if not self.attempts.held and not self.attempts.fenced:
            return True
        if time.monotonic() >= self.drain_deadline:
            seconds = self.settings.drain_seconds
            self.attempts.drain(
                f"worker {self.worker_id} drained: the attempt was still running after "
                f"--drain-seconds={seconds:g}, so its task process was stopped; it may be retried"
            )
            return True
        return False

    def _claim_while_free(self) -> None:
        """Claim as many attempts as slots are free, in one transaction: a statement per slot
        kind claims them, two read their invocations, and their task processes are recorded
        RUNNING in one batch."""
        free = self._free_slots()
        if not free or (self.emptied is not None and self.emptied.issuperset(free)):
            return  # no slot, or the queue had nothing for these kinds and nothing came
        if self.signals.count != self.signals_seen:
            return  # asked to stop: the next pass drains
        sent = time.monotonic()  # the leases the claim grants run from after this
        started: list[tuple[AttemptInvocation, TaskSettings, ClaimedAttempt, TaskFiles]] = []
        with claiming(self.engine, self.actor) as claim:
            claimed = claim_attempts(
                claim.conn,
                self.actor,
                pool=self.settings.pool,
                free=free,
                owner_id=self.worker_id,
                lease_seconds=self.settings.owner.lease_seconds,
                summarise=False,  # each is started or ended below, which summarises its task run
            )
            # Read with the claim: the task processes are handed them and read nothing themselves.
            invocations = read_invocations(claim.conn, [c.attempt_id for c in claimed])
            for attempt in claimed:
                invocation = invocations[attempt.attempt_id]
                task = self._task(claim.conn, invocation)
                files = None if task is None else self._files(claim.conn, invocation)
                if task is not None and files is not None:
                    started.append((invocation, task, attempt, files))
            if started:
                claim.start_all(
                    [(files.launch(self._spec(inv, task)), inv) for inv, task, _, files in started]
                )
        for running, (invocation, task, attempt, _) in zip(claim.running, started, strict=True):
            self.attempts.hold(running, invocation, task.slot_kind, task.handler, sent)
            self._started(invocation, task, attempt.waited)
        got = Counter(attempt.slot_kind for attempt in claimed)
        # A kind that came back short has nothing more to claim until an attempt is queued.
        self.emptied = frozenset(kind for kind, count in free.items() if got[kind] < count)

    def _free_slots(self) -> dict[SlotKind, int]:
        used = self.attempts.used()
        return {
            kind: slots - used[kind]
            for kind, slots in self.settings.slots.items()
            if used[kind] < slots
        }

    def _task(self, conn: EngineConnection, invocation: AttemptInvocation) -> TaskSettings | None:
        """The claimed attempt's task settings; None when its metadata can't start it (then the
        attempt ends FAILED in the claim's transaction, rather than waiting for its lease)."""
        shape = self.shapes.get(invocation.pipeline_run_id)
        try:
            if shape is None:
                shape = build_shape(read_pipeline_shape(conn, invocation.pipeline_id), 0)
                # Attempts of one run share its tasks' settings: read them once per run.
                kept = list(self.shapes.items())[-SHAPES_KEPT:]
                self.shapes = {**dict(kept), invocation.pipeline_run_id: shape}
            return shape.tasks[invocation.task_id]
        except MetadataError as error:
            message = f"worker {self.worker_id} could not start the task: {error}"
            self.attempts.fail(conn, invocation.attempt_id, message, retryable=False)
            return None

    def _files(self, conn: EngineConnection, invocation: AttemptInvocation) -> TaskFiles | None:
        """The files the attempt runs (its run's bundle, else the project folder); None when
        they can't be had (then the attempt ends FAILED, retryable, in the claim's
        transaction: another worker, or this one later, may reach the store)."""
        try:
            return self.files.for_attempt(conn, invocation)
        except (ConfigurationError, NotFoundError) as error:
            message = f"worker {self.worker_id} could not get the project's files: {error}"
            self.attempts.fail(conn, invocation.attempt_id, message, retryable=True)
            return None

    def _started(self, invocation: AttemptInvocation, task: TaskSettings, waited: float) -> None:
        WORKER_CLAIMS.labels(self.settings.pool, task.slot_kind.value).inc()
        DISPATCH_SECONDS.labels("queue").observe(waited)
        log.info(
            "claimed attempt %s: run %s, task %s.%s, attempt %s, %s slot",
            invocation.attempt_id,
            invocation.pipeline_run_id,
            invocation.pipeline_code,
            invocation.task_code,
            invocation.attempt_number,
            task.slot_kind.value,
            extra=self.attempts.held[invocation.attempt_id].context,
        )

    def _spec(self, invocation: AttemptInvocation, task: TaskSettings) -> LaunchSpec:
        where = (
            invocation.pipeline_code,
            invocation.pipeline_run_id,
            invocation.task_code,
            invocation.attempt_number,
        )
        spec = launch_spec(
            self.settings.owner, self.worker_id, invocation.attempt_id, where, task.timeout_seconds
        )
        # Rung by the task process once its outcome is handed over: recorded while it ends.
        return replace(spec, doorbell=self.attempts.doorbell())

    def _beat(self) -> None:
        sent = time.monotonic()
        leases = self.attempts.leases
        leases.sending(sent)  # should it go unanswered, the lease guard's thread fences
        try:
            with self.engine.transaction(self.actor) as conn:
                leases.limit_renewal(conn)
                found = beat_worker(
                    conn, self.worker_id, lease_seconds=self.settings.owner.lease_seconds
                )
        except EngineDBError as error:
            self.attempts.leases.failed(error, sent)  # only a cut-off counts toward fencing
            raise
        if found.status is WorkerStatus.GONE or found.status is None:
            leases.renewed((), sent)  # answered: nothing is in flight any more
            self._rejoin("GONE" if found.status else "missing")
            return
        owned_ids = {owned.attempt_id for owned in found.attempts}
        self.attempts.leases.renewed(owned_ids, sent)
        for attempt_id in [held for held in self.attempts.held if held not in owned_ids]:
            self.attempts.stop_unowned(attempt_id)
        for owned in found.attempts:
            # A fenced one was stopped while the Engine DB was away: record_fenced records it.
            if owned.attempt_id not in self.attempts.held.keys() | self.attempts.fenced.keys():
                self._release_orphan(owned.attempt_id)
        self.attempts.cancel_requested(
            CancelRequest(owned.attempt_id, owned.cancel_requested_at)
            for owned in found.attempts
            if owned.cancel_requested_at is not None
        )

    def _rejoin(self, state: str) -> None:
        """Declared GONE (it missed heartbeats: paused, or cut off): whatever it runs may be
        retried elsewhere, so stop it all at once, then register again as a new worker."""
        log.error(
            "worker %s is %s in the Engine DB (declared so after it missed heartbeats); it "
            "stops its %s task process(es) at once",
            self.worker_id,
            state,
            len(self.attempts.held),
        )
        self.attempts.fence_all(
            f"worker {self.worker_id} was declared GONE after it missed heartbeats, so it "
            "stopped the task process; it may be retried"
        )
        if self.drain_deadline is not None:
            return  # it was stopping anyway: it ends now that nothing runs
        self._identify(new_owner_id())
        self._register(replace(self.registration, worker_id=self.worker_id))

    def _release_orphan(self, attempt_id: int) -> None:
        """Claimed here but never started (the Engine DB failed in between): free it for a retry."""
        message = (
            f"worker {self.worker_id} claimed the attempt but could not start its task process"
        )
        with self.engine.transaction(self.actor) as conn:
            self.attempts.fail(conn, attempt_id, message, retryable=True)

    def _drain(self, why: str) -> None:
        if self.drain_deadline is not None:
            self.drain_deadline = time.monotonic()  # asked twice: stop waiting
            return
        try:
            with self.engine.transaction(self.actor) as conn:
                drain_worker(conn, self.worker_id, self.actor)
        except StaleTransitionError as refused:
            # Declared GONE already: it drains all the same, and its next beat stops the rest.
            log.warning("worker %s drains unrecorded: %s", self.worker_id, refused)
        self.drain_deadline = time.monotonic() + self.settings.drain_seconds
        log.info(
            "worker %s drains (%s): it claims nothing new and waits up to %gs for %s attempt(s)",
            self.worker_id,
            why,
            self.settings.drain_seconds,
            len(self.attempts.held),
        )

    def _ended(self, ended: Ended) -> None:
        """Log and count how the attempt ended: as this worker just recorded it, or as read."""
        if ended.outcome is not None:
            end = AttemptEnd(ended.outcome.status, ended.outcome.error_message)
        else:
            with self.engine.read() as conn:
                end = attempt_end(conn, ended.attempt_id)
        WORKER_ENDED.labels(self.settings.pool, end.status.value).inc()
        detail = f": {end.error_message.splitlines()[0]}" if end.error_message else ""
        level = logging.INFO if end.status is AttemptStatus.SUCCESS else logging.WARNING
        context = ended.held.context
        log.log(
            level,
            "attempt %s ended %s%s",
            ended.attempt_id,
            end.status.value,
            detail,
            extra=context,
        )

    def _count_running(self) -> None:
        """Read at scrape time from the jobs the loop keeps (list() copies them in one step)."""
        for kind in SlotKind:
            WORKER_RUNNING.labels(self.settings.pool, kind.value).set_function(
                partial(self._running, kind)
            )

    def _running(self, kind: SlotKind) -> int:
        return self.attempts.used()[kind]

    def _gone(self) -> None:
        try:
            with self.engine.transaction(self.actor) as conn:
                retire_worker(conn, self.worker_id, self.actor)
        except StaleTransitionError:
            log.info("worker %s is GONE (declared so before it stopped)", self.worker_id)
            return
        except EngineDBError as error:
            log.error("worker %s could not record that it is GONE: %s", self.worker_id, error)
            return
        log.info("worker %s is GONE", self.worker_id)

    def _wait(self, outage: float | None = None) -> None:
        """Until a child exits, a signal comes, or the next beat, time limit or poll is due.
        During an outage, ``outage`` seconds (the backoff) unless a signal comes or a lease
        must be fenced: an exited child's outcome waits for the Engine DB anyway, and waking
        for it would retry at once, again and again."""
        exits: AbstractContextManager[list[int]] = nullcontext([])
        listening = None
        if outage is None:
            exits = self.attempts.exits()
            # A NOTIFY (an attempt queued, a cancel asked) wakes the worker at once.
            listening = self._descriptor()
        deadline = time.monotonic() + self._timeout(outage)
        with exits as descriptors:
            wake = [self.signals.wakeup, *descriptors]
            wake += [] if listening is None else [listening]
            while True:
                readable = select.select(wake, [], [], max(0.0, deadline - time.monotonic()))[0]
                queued = listening in readable and self._queued()
                if queued or time.monotonic() >= deadline:
                    self.emptied = None
                    break
                # Only notifications, none of an attempt queued (the others are the start and
                # end of work, this worker's own among them): nothing to claim, wait on.
                if readable != [listening] or self._descriptor() != listening:
                    break
        self.signals.clear()

    def _queued(self) -> bool:
        """Drain the notifications; whether an attempt was queued among them."""
        return self.listener is not None and bool(self.listener.drain(queued_attempt))

    def _descriptor(self) -> int | None:
        return self.listener.descriptor() if self.listener is not None else None

    def _timeout(self, outage: float | None = None) -> float:
        now = time.monotonic()
        # During an outage, time limits and the drain's end need the Engine DB to be acted on:
        # they wait for the next try; a lease to fence does not.
        act = self.attempts.seconds_to_act(now, limits=outage is None)
        due = [] if act is None else [act]
        if outage is not None:
            return max(0.0, min([outage, *due]))
        due += [self.settings.owner.poll_seconds, self.next_beat - now]
        if self.drain_deadline is not None:
            due.append(self.drain_deadline - now)
        return max(0.0, min(due))


def _actor(worker_id: str) -> Actor:
    return Actor(worker_id[:MAX_ACTOR_LENGTH], ActorKind.WORKER)
