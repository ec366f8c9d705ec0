"""The attempt owner: the task processes one owner runs, and every outcome it records for them.

The local pool (the foreground CLI's and the overseer's) and a worker agent each claim attempts
and start their task processes (runtime/launcher); from then on an ``AttemptOwner`` holds them,
with their slot kinds, and settles them, whatever ends them:

- the task process exited: the outcome it handed over is recorded (runtime/handover); when it
  handed over none, and recorded none itself, the warehouse ledger's (a SQL task whose writes
  committed), else FAILED. A task process that rings the owner's doorbell has its outcome
  recorded as soon as it handed it over, while it ends; its slot is freed once it has;
- it ran out of time: stopped, recorded TIMED_OUT;
- an operator asked to cancel it (``cancel_requested``, however the owner read the requests) or
  the owner's caller cancelled it: stopped, recorded CANCELLED;
- the owner goes away (``drain``): stopped, recorded FAILED and retryable;
- its lease renewal was refused: stopped at once, nothing recorded (it is no longer this
  owner's); its lease could not be renewed for too long: stopped at once before the lease runs
  out (runtime/leases), recorded FAILED and retryable once the Engine DB answers.

Every outcome an owner records is built here; a refusal (the task process recorded its own, or
the attempt was settled elsewhere) leaves the record that stands. docs/concepts/outcomes.md
tells the whole path.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace

from etl_craft.core.actor import Actor
from etl_craft.core.enums import AttemptStatus, Handler, SlotKind
from etl_craft.core.errors import EngineDBError, ExitCode, StaleTransitionError
from etl_craft.enginedb.attempts import AttemptInvocation, CancelRequest, attempt_status
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.offsets import finish_with_offset
from etl_craft.enginedb.transitions import (
    AttemptEnd,
    AttemptOutcome,
    cancel_owned_attempt,
    finish_attempt,
    finish_attempts,
    time_out_attempt,
)
from etl_craft.runtime.handover import (
    Doorbell,
    HandedOutcome,
    hand_over,
    outcome_path,
    take_outcome,
)
from etl_craft.runtime.launcher import RunningAttempt
from etl_craft.runtime.leases import LeaseGuard, LeaseWatch, silence_after
from etl_craft.runtime.log_archive import AttemptLogs
from etl_craft.runtime.logfile import TAIL_BYTES
from etl_craft.runtime.processes import stop_group
from etl_craft.runtime.reconcile import LEDGERED, LedgerLookup

STOP_GRACE_SECONDS = 5.0
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Held:
    """A task process an owner started and has yet to settle."""

    running: RunningAttempt
    kind: SlotKind
    task_run_id: int
    ledgered: bool  # its writes commit with a ledger row: an exit may be recovered from it
    context: Mapping[str, object]  # pipeline, task and ids, for every log record about it


@dataclass(frozen=True)
class Ended:
    """An attempt the owner settled and no longer holds. ``outcome`` is what the owner recorded
    (or, going away, meant to record); None when its record was refused or it recorded none of
    its own (a timeout, a cancel, a refused lease): the Engine DB tells how the attempt ended."""

    attempt_id: int
    held: Held
    outcome: AttemptOutcome | None = None


def attempt_context(invocation: AttemptInvocation) -> dict[str, object]:
    return {
        "pipeline": invocation.pipeline_code,
        "task": invocation.task_code,
        "pipeline_run_id": invocation.pipeline_run_id,
        "task_run_id": invocation.task_run_id,
        "attempt": invocation.attempt_number,
    }


def owner_failure(
    message: str, *, retryable: bool, task_log: str | None = None, exit_code: int | None = None
) -> AttemptOutcome:
    """FAILED, recorded by the owner for an attempt whose task process could not record it."""
    return AttemptOutcome(
        AttemptStatus.FAILED,
        error_message=message,
        task_log=task_log,
        exit_code=exit_code,
        retryable=retryable,
        source="OWNER",
    )


class AttemptOwner:
    def __init__(
        self,
        engine: EngineDB,
        actor: Actor,
        owner_id: str,
        lease_seconds: float,
        ledger: LedgerLookup | None,
        *,
        title: str = "owner",  # how messages name this process: "owner" or "worker"
        on_end: Callable[[Ended], None] | None = None,
        heartbeat_seconds: float | None = None,  # how often it renews, to tell a stuck loop
        logs: AttemptLogs | None = None,  # the tails it records, and where logs go
    ) -> None:
        self.engine, self.actor, self.owner_id, self.title = engine, actor, owner_id, title
        self.logs = logs or AttemptLogs(TAIL_BYTES)
        self.ledger, self.on_end = ledger, on_end
        self.held: dict[int, Held] = {}
        self.leases = LeaseWatch(
            lease_seconds, silence_after(lease_seconds, engine.dialect), heartbeat_seconds
        )
        self.guard = LeaseGuard(self.leases)
        # Stopped before their leases ran out, to be recorded once the Engine DB answers.
        self.fenced: dict[int, tuple[Held, str]] = {}
        # Recorded from the outcome they handed over, ending: their slots are freed once gone.
        self.exiting: dict[int, Held] = {}
        self._doorbell: Doorbell | None = None

    @property
    def name(self) -> str:
        return f"{self.title} {self.owner_id}"

    def become(self, owner_id: str, actor: Actor) -> None:
        """Hold attempts under a new identity from now on (a worker that registered again)."""
        self.owner_id, self.actor = owner_id, actor

    def hold(
        self,
        running: RunningAttempt,
        invocation: AttemptInvocation,
        kind: SlotKind,
        handler: Handler,
        claimed_at: float,  # a monotonic time taken before the claim was sent
    ) -> None:
        context = attempt_context(invocation)
        ledgered = handler in LEDGERED
        held = Held(running, kind, invocation.task_run_id, ledgered, context)
        self.held[running.attempt_id] = held
        self.leases.claimed(running.attempt_id, claimed_at, running.process.pid)
        self.guard.ensure()

    def doorbell(self) -> str:
        """The name of the doorbell its task processes ring once they handed their outcome
        over (runtime/handover), opened on first use; settle() records what rang."""
        if self._doorbell is None:
            self._doorbell = Doorbell()
        return self._doorbell.name

    def used(self) -> Counter[SlotKind]:
        """Slots in use per kind (list() copies the attempts in one step)."""
        return Counter(held.kind for held in [*self.held.values(), *self.exiting.values()])

    def live(self) -> list[int]:
        # An exited child's attempt is settled, or about to be: only live ones are renewed.
        return [a for a, held in list(self.held.items()) if held.running.exit_code() is None]

    def settle(self) -> None:
        """Record what exited or rang the doorbell (the outcomes handed over together in one
        transaction), stop and record what ran out of time."""
        rang = self._doorbell is not None and self._doorbell.drain()
        self._let_go_of_exited()
        ended: list[_Ending] = []
        for attempt_id, held in list(self.held.items()):
            running = held.running
            path = outcome_path(running.spec.log_path)
            if running.exit_code() is not None:
                ended.append(_Ending(attempt_id, held, take_outcome(path), exited=True))
            elif running.overdue():
                self._stop_for_timeout(running)
                self._end(attempt_id)
            elif rang and (handed := take_outcome(path, writer_gone=False)) is not None:
                ended.append(_Ending(attempt_id, held, handed, exited=False))
        together = [ending for ending in ended if _plain(ending.handed)]
        if len(together) > 1:
            try:
                recorded = self._record_together(together)
            except BaseException:
                _hand_back([ending for ending in ended if not _plain(ending.handed)])
                raise
            if recorded:
                ended = [ending for ending in ended if not _plain(ending.handed)]
        for index, ending in enumerate(ended):
            try:
                outcome = self._settle_exit(ending.held, ending.handed)
            except BaseException:
                _hand_back(ended[index + 1 :])
                raise
            self._ended(ending, outcome)

    def _let_go_of_exited(self) -> None:
        """Free the slots of recorded attempts whose task processes are gone; stop one that
        outlives its time limit after handing its outcome over."""
        for attempt_id, held in list(self.exiting.items()):
            running = held.running
            if running.exit_code() is None and running.overdue():
                stop_group(running.process.pid, 0)
                running.process.wait()
            if running.exit_code() is not None:
                del self.exiting[attempt_id]
                self._log_ended(running)

    def _ended(self, ending: _Ending, outcome: AttemptOutcome | None) -> None:
        self._end(ending.attempt_id, outcome)
        if not ending.exited:
            self.exiting[ending.attempt_id] = ending.held

    def cancel(self, attempt_id: int, reason: str) -> None:
        held = self.held.get(attempt_id)
        if held is None:
            return
        with _settling(held.running, "cancelled"):
            self._stop(held.running, STOP_GRACE_SECONDS)
            try:
                with self.engine.transaction(self.actor) as conn:
                    cancel_owned_attempt(
                        conn,
                        attempt_id,
                        self.actor,
                        owner_id=held.running.spec.owner_id,
                        message=reason,
                    )
            except StaleTransitionError:
                pass  # the child recorded its outcome before it stopped
        self._end(attempt_id)

    def cancel_requested(self, requests: Iterable[CancelRequest]) -> None:
        """Cancel the held attempts an operator asked to stop; the others (fenced, or not
        started here) are left to whoever settles them."""
        for request in requests:
            if request.attempt_id in self.held:
                at = request.requested_at.isoformat()
                reason = f"cancelled on request (at {at}); {self.name} stopped its task process"
                self.cancel(request.attempt_id, reason)

    def drain(self, reason: str) -> None:
        """Stop every task process because this owner goes away: FAILED, retryable, ``reason``.
        One the Engine DB does not take is logged and left to the reconciler, once its lease
        runs out; the others are stopped all the same."""
        for attempt_id, held in list(self.held.items()):
            running = held.running
            # Unless the Engine DB refuses it (then the record that stands is read), the
            # outcome this owner meant to record, even when the Engine DB did not take it.
            outcome: AttemptOutcome | None = owner_failure(reason, retryable=True)
            try:
                with _settling(running, "stopped"):
                    self._stop(running, STOP_GRACE_SECONDS)
                    outcome = self._record_failure(running, reason)
            except EngineDBError as error:
                log.error("attempt %s: its outcome was not recorded: %s", attempt_id, error)
            self._end(attempt_id, outcome)

    def fence(self) -> None:
        """Stop, without touching the Engine DB, the task processes of attempts whose lease
        renewal was refused (no longer this owner's: nothing to record) and of those whose
        lease could not be renewed for too long (recorded FAILED once the Engine DB answers)."""
        due = self.leases.due()
        for attempt_id in due.refused:
            self.stop_unowned(attempt_id)
        for attempt_id in due.expiring:
            held = self.held.get(attempt_id)
            if held is None or held.running.exit_code() is not None:
                # Exited: nothing left to stop; settle records its outcome once it can.
                self.leases.forget(attempt_id)
        self.leases.stop_expiring()  # unless the guard's thread did already
        for stopped in self.leases.take_stopped():
            held = self.held.get(stopped.attempt_id)
            if held is not None:
                message = stopped.message(self.name)
                self._set_aside(stopped.attempt_id, message)
                log.error("attempt %s: %s", stopped.attempt_id, message, extra=held.context)

    def stop_unowned(self, attempt_id: int) -> None:
        """This owner's lease no longer covers the attempt: it was recorded LOST or ended by
        someone else, or another owner claimed it. Its task process must publish nothing more."""
        held = self.held.get(attempt_id)
        self.leases.forget(attempt_id)
        if held is None:
            return
        self._kill(held.running)
        log.error(
            "attempt %s is no longer %s's (its lease was not renewed: it was settled or claimed "
            "elsewhere), so it stopped the task process at once",
            attempt_id,
            self.name,
            extra=held.context,
        )
        self._end(attempt_id)

    def fence_all(self, reason: str) -> None:
        """Stop every task process at once (this owner was declared gone: what it runs may be
        retried elsewhere), and record them FAILED, retryable, with ``reason``."""
        for attempt_id in list(self.held):
            self._set_aside(attempt_id, reason)
        self.record_fenced()

    def record_fenced(self) -> None:
        for attempt_id, (held, message) in list(self.fenced.items()):
            outcome = self._record_failure(held.running, message)
            del self.fenced[attempt_id]
            self._log_ended(held.running)
            if self.on_end is not None:
                self.on_end(Ended(attempt_id, held, outcome))

    def fail(
        self, conn: EngineConnection, attempt_id: int, message: str, *, retryable: bool
    ) -> None:
        """Record FAILED for a claimed attempt this owner started no task process for."""
        outcome = owner_failure(message, retryable=retryable)
        finish_attempt(conn, attempt_id, self.actor, owner_id=self.owner_id, outcome=outcome)
        log.log(
            logging.WARNING if retryable else logging.ERROR,
            "attempt %s ended FAILED: %s",
            attempt_id,
            message,
        )

    def seconds_to_act(self, now: float | None = None, *, limits: bool = True) -> float | None:
        """How long until a lease must be fenced or (with ``limits``) a time limit passes;
        None when nothing is due."""
        now = now or time.monotonic()
        fence = self.leases.seconds_to_fence(now)
        due = [] if fence is None else [fence]
        if limits:
            left = [held.running.seconds_left(now) for held in self.held.values()]
            due += [seconds for seconds in left if seconds is not None]
        return min(due) if due else None

    @contextmanager
    def exits(self) -> Iterator[list[int]]:
        """Descriptors that become readable when a held task process exits or rings."""
        ending = [*self.held.values(), *self.exiting.values()]
        descriptors = [held.running.process.exit_descriptor() for held in ending]
        if self._doorbell is not None:
            descriptors.append(os.dup(self._doorbell.descriptor()))
        try:
            yield descriptors
        finally:
            for descriptor in descriptors:
                os.close(descriptor)

    def _end(self, attempt_id: int, outcome: AttemptOutcome | None = None) -> None:
        held = self.held.pop(attempt_id)
        self.leases.forget(attempt_id)
        if held.running.exit_code() is not None:
            self._log_ended(held.running)  # one still ending: once it is gone (exiting)
        if self.on_end is not None:
            self.on_end(Ended(attempt_id, held, outcome))

    def _tail(self, running: RunningAttempt) -> str | None:
        return self.logs.ending(running.spec.log_path, running.spec.log_location)

    def _log_ended(self, running: RunningAttempt) -> None:
        self.logs.ended(running.spec.log_path, running.spec.log_location)

    def _set_aside(self, attempt_id: int, message: str) -> None:
        held = self.held.pop(attempt_id)
        self.leases.forget(attempt_id)
        self._kill(held.running)
        self.fenced[attempt_id] = (held, message)

    def _stop(self, running: RunningAttempt, grace_seconds: float) -> None:
        stop_group(running.process.pid, grace_seconds)
        running.process.wait()

    def _kill(self, running: RunningAttempt) -> None:
        """At once, without the grace: an attempt no longer this owner's publishes nothing more."""
        with _settling(running, "unowned"):
            self._stop(running, 0)

    def _record_together(self, ended: list[_Ending]) -> bool:
        """Record the outcomes several task processes handed over, in one transaction; False
        when one of them was refused (nothing is recorded then: each is recorded on its own)."""
        ends, outcomes = [], {}
        for ending in ended:
            assert ending.handed is not None
            running = ending.held.running
            outcome = replace(ending.handed.outcome, task_log=self._tail(running))
            outcomes[ending.attempt_id] = outcome
            owner = running.spec.owner_id
            ends.append(AttemptEnd(ending.attempt_id, ending.held.task_run_id, owner, outcome))
        try:
            with self.engine.transaction(self.actor) as conn:
                finish_attempts(conn, self.actor, ends)
        except StaleTransitionError:
            return False
        except EngineDBError:
            _hand_back(ended)
            raise
        for ending in ended:
            _settled(ending.held.running, "exited")
            self._ended(ending, outcomes[ending.attempt_id])
        return True

    def _settle_exit(self, held: Held, handed: HandedOutcome | None) -> AttemptOutcome | None:
        """The outcome the child handed over (the usual end); nothing when it recorded one
        itself; else the ledger's outcome, else FAILED."""
        running = held.running
        with _settling(running, "exited"):
            path = outcome_path(running.spec.log_path)
            if handed is not None:
                try:
                    return self._record_handed(running, handed)
                except EngineDBError:
                    hand_over(path, handed)  # for the next try, once the Engine DB answers
                    raise
            with self.engine.read() as conn:
                found = attempt_status(conn, running.attempt_id)
            if found is None or found.terminal:
                return None
            committed = self.ledger(running.attempt_id) if self.ledger and held.ledgered else None
            code, pid = running.process.returncode, running.process.pid
            if committed is None:
                message = (
                    f"the task process (pid {pid}) exited with code {code} without recording "
                    f"an outcome; see the attempt log {running.spec.log_path}"
                )
                return self._record_failure(running, message)
            message = (
                f"outcome recovered from the warehouse ledger: the task process (pid {pid}) "
                f"committed its writes, then exited with code {code} before recording them"
            )
            recovered = AttemptOutcome(
                AttemptStatus.SUCCESS,
                committed,
                error_message=message,
                task_log=self._tail(running),
                exit_code=code,
                retryable=False,
                source="LEDGER",
            )
            return self._record(running, recovered)

    def _record_handed(
        self, running: RunningAttempt, handed: HandedOutcome
    ) -> AttemptOutcome | None:
        outcome = replace(handed.outcome, task_log=self._tail(running))
        try:
            with self.engine.transaction(self.actor) as conn:
                finish_with_offset(
                    conn,
                    running.attempt_id,
                    self.actor,
                    owner_id=running.spec.owner_id,
                    outcome=outcome,
                    task_id=handed.task_id,
                    offset=handed.offset,
                )
        except StaleTransitionError as refused:
            # Settled by someone else meanwhile (this owner was declared gone): it changes nothing.
            log.error(
                "attempt %s: the task's outcome was not recorded: %s", running.attempt_id, refused
            )
            return None
        return outcome

    def _stop_for_timeout(self, running: RunningAttempt) -> None:
        with _settling(running, "timed_out"):
            self._stop(running, STOP_GRACE_SECONDS)
            limit = running.spec.timeout_seconds
            message = f"the task ran longer than TASK_TIMEOUT_SECONDS={limit:g} and was stopped"
            try:
                with self.engine.transaction(self.actor) as conn:
                    time_out_attempt(
                        conn,
                        running.attempt_id,
                        self.actor,
                        owner_id=running.spec.owner_id,
                        error_message=message,
                        task_log=self._tail(running),
                        exit_code=int(ExitCode.TIMEOUT),
                    )
            except StaleTransitionError:
                # Still CLAIMED (the child never started) or already settled by the child.
                self._record_failure(running, message, int(ExitCode.TIMEOUT))

    def _record_failure(
        self, running: RunningAttempt, message: str, code: int | None = None
    ) -> AttemptOutcome | None:
        """FAILED, retryable, for a task process that recorded no outcome of its own."""
        outcome = owner_failure(
            message,
            retryable=True,
            task_log=self._tail(running),
            exit_code=running.process.returncode if code is None else code,
        )
        return self._record(running, outcome)

    def _record(self, running: RunningAttempt, outcome: AttemptOutcome) -> AttemptOutcome | None:
        try:
            with self.engine.transaction(self.actor) as conn:
                finish_attempt(
                    conn,
                    running.attempt_id,
                    self.actor,
                    owner_id=running.spec.owner_id,
                    outcome=outcome,
                )
        except StaleTransitionError:
            return None  # the child recorded its own outcome, which stands
        return outcome


@dataclass(frozen=True)
class _Ending:
    """A held attempt whose task process exited, or handed its outcome over and is ending."""

    attempt_id: int
    held: Held
    handed: HandedOutcome | None
    exited: bool


def _hand_back(ended: list[_Ending]) -> None:
    """Outcomes taken but not recorded, put back for the next pass (once the Engine DB
    answers)."""
    for ending in ended:
        if ending.handed is not None:
            hand_over(outcome_path(ending.held.running.spec.log_path), ending.handed)


def _plain(handed: HandedOutcome | None) -> bool:
    """Handed over with no offset to store: it may be recorded with others in one batch."""
    return handed is not None and handed.offset is None


@contextmanager
def _settling(running: RunningAttempt, how: str) -> Iterator[None]:
    """End the owner's span of the attempt, whatever happens while it is settled, and leave
    no handed-over outcome behind (one stopped in the act of ending loses it). Unless the
    Engine DB failed: then nothing was recorded, the owner settles the attempt again once it
    can, and the outcome its task process handed over waits for it."""
    try:
        yield
    except EngineDBError:
        raise
    except BaseException:
        _settled(running, how)
        raise
    _settled(running, how)


def _settled(running: RunningAttempt, how: str) -> None:
    outcome_path(running.spec.log_path).unlink(missing_ok=True)
    code = running.process.returncode
    running.span.set_attribute("etl_craft.settled", how)
    if code is not None:
        running.span.set_attribute("etl_craft.exit_code", code)
    running.span.end()
