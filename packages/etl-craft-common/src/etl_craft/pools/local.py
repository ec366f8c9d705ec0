"""The local provider: one child process per attempt on this host, slots per kind.

It is what the foreground CLI uses, the overseer's pool on SQLite, and the pool of an overseer
run without workers. It claims an attempt for its owner, starts the task process, and records
what the child could not: it died, it ran out of time, or it was asked to stop. An attempt
whose lease renewal was refused is no longer its own, and one whose lease it could not renew
for too long is about to be; it stops their task processes at once (leases.py).
"""

from __future__ import annotations

import logging
import os
import select
import time
from collections.abc import Mapping, Sequence

from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import EngineDBError, StaleTransitionError
from etl_craft.core.faults import fault_point
from etl_craft.enginedb.attempts import cancel_requests, read_invocation
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.transitions import claim_attempt
from etl_craft.pools.base import AttemptSpec, Capacity, HandleStatus, recorded_status
from etl_craft.runtime.launcher import (
    RunningAttempt,
    claiming,
    launch_spec,
    record_stopped,
    settle_exit,
    stop_for_cancel,
    stop_for_drain,
    stop_for_timeout,
    stop_unowned,
)
from etl_craft.runtime.leases import LeaseWatch
from etl_craft.runtime.reconcile import LEDGERED, LedgerLookup

CANCELLED = "cancelled by an operator"
log = logging.getLogger(__name__)


class LocalPool:
    name = "local"
    submits = True

    def __init__(
        self,
        engine: EngineDB,
        settings: OwnerSettings,
        slots: Mapping[SlotKind, int],
        ledger: LedgerLookup | None = None,
    ) -> None:
        self.engine, self.settings, self.slots, self.ledger = engine, settings, slots, ledger
        self.running: dict[int, RunningAttempt] = {}
        self.kinds: dict[int, SlotKind] = {}
        self.ledgered: set[int] = set()
        self.seen: set[int] = set()
        self.leases = LeaseWatch(settings.lease_seconds)
        # Stopped before their leases ran out, to be recorded once the Engine DB answers.
        self.fenced: dict[int, tuple[RunningAttempt, str]] = {}

    def capacity(self) -> Capacity:
        used: dict[SlotKind, int] = {}
        for attempt_id in self.running:
            kind = self.kinds[attempt_id]
            used[kind] = used.get(kind, 0) + 1
        return Capacity(self.slots, used)

    def submit(self, spec: AttemptSpec) -> int:
        if spec.attempt_id in self.seen:
            return spec.attempt_id
        self.seen.add(spec.attempt_id)
        where = (spec.pipeline_code, spec.pipeline_run_id, spec.task_code, spec.attempt_number)
        launched = launch_spec(
            self.settings, self.settings.owner_id, spec.attempt_id, where, spec.timeout_seconds
        )
        sent = time.monotonic()
        try:
            with claiming(self.engine, SYSTEM) as claim:
                claim_attempt(
                    claim.conn,
                    spec.attempt_id,
                    SYSTEM,
                    owner_id=self.settings.owner_id,
                    lease_seconds=self.settings.lease_seconds,
                )
                claim.start(launched, read_invocation(claim.conn, spec.attempt_id))
        except StaleTransitionError:
            return spec.attempt_id  # cancelled or claimed by another owner meanwhile
        except EngineDBError:
            self.seen.discard(spec.attempt_id)  # never claimed: submitted again once it answers
            raise
        assert claim.running is not None
        self.running[spec.attempt_id] = claim.running
        self.leases.claimed(spec.attempt_id, sent)
        self.kinds[spec.attempt_id] = spec.slot_kind
        if spec.handler in LEDGERED:
            self.ledgered.add(spec.attempt_id)
        fault_point("after_launch")
        return spec.attempt_id

    def status(self, handle: int) -> HandleStatus:
        if handle not in self.seen:
            return HandleStatus.UNKNOWN
        if handle in self.running:
            return HandleStatus.RUNNING
        found = recorded_status(self.engine, handle)
        # Claimed by another owner meanwhile: this pool can't tell what became of it.
        return HandleStatus.UNKNOWN if found is HandleStatus.RUNNING else found

    def cancel(self, handle: int, reason: str) -> None:
        running = self.running.pop(handle, None)
        self.leases.forget(handle)
        if running is not None:
            stop_for_cancel(self.engine, running, SYSTEM, reason)

    def reconcile(self) -> dict[int, HandleStatus]:
        return {handle: self.status(handle) for handle in self.seen}

    def poll(self) -> None:
        self._fence()
        for attempt_id, (running, message) in list(self.fenced.items()):
            record_stopped(self.engine, running, SYSTEM, message)
            del self.fenced[attempt_id]
        for attempt_id, running in list(self.running.items()):
            if running.exit_code() is not None:
                ledger = self.ledger if attempt_id in self.ledgered else None
                settle_exit(self.engine, running, SYSTEM, ledger)
            elif running.overdue():
                stop_for_timeout(self.engine, running, SYSTEM)
            else:
                continue
            del self.running[attempt_id]
            self.leases.forget(attempt_id)
        if self.running:
            with self.engine.read() as conn:
                requested = cancel_requests(conn, self.settings.owner_id)
            for attempt_id in requested:
                self.cancel(attempt_id, CANCELLED)

    def _fence(self) -> None:
        """Stop, without touching the Engine DB, the task processes of attempts whose lease
        renewal was refused (no longer this owner's: nothing to record) and of those whose
        lease could not be renewed for too long (recorded FAILED once the Engine DB answers)."""
        due = self.leases.due()
        for attempt_id in due.refused:
            self.leases.forget(attempt_id)
            running = self.running.pop(attempt_id, None)
            if running is not None:
                stop_unowned(running)
                log.warning(
                    "attempt %s: its lease renewal was refused (it was settled or claimed by "
                    "another owner), so owner %s stopped its task process",
                    attempt_id,
                    self.settings.owner_id,
                )
        for attempt_id in due.expiring:
            running = self.running.get(attempt_id)
            if running is None or running.exit_code() is not None:
                # Exited: nothing left to stop; poll records its outcome once it can.
                self.leases.forget(attempt_id)
                continue
            message = self._fence_message(attempt_id)
            del self.running[attempt_id]
            self.leases.forget(attempt_id)
            stop_unowned(running)
            self.fenced[attempt_id] = (running, message)
            log.error("attempt %s: %s", attempt_id, message)

    def _fence_message(self, attempt_id: int) -> str:
        return (
            f"owner {self.settings.owner_id} could not renew the attempt's lease for "
            f"{self.leases.renewed_ago(attempt_id):.1f}s (the lease lasts "
            f"{self.settings.lease_seconds:g}s; the Engine DB did not answer), so it stopped the "
            "task process before the lease ran out; it may be retried"
        )

    def wait(self, timeout: float, also: Sequence[int] = ()) -> None:
        """Until a child exits, a time limit or a lease's fence comes due, ``also`` is
        readable, or ``timeout``."""
        fence = self.leases.seconds_to_fence()
        if fence is not None:
            timeout = min(timeout, fence)
        for running in self.running.values():
            left = running.seconds_left()
            if left is not None:
                timeout = min(timeout, left)
        descriptors = [running.process.exit_descriptor() for running in self.running.values()]
        try:
            if descriptors or also:
                select.select([*descriptors, *also], [], [], timeout)
            else:
                time.sleep(timeout)
        finally:
            for descriptor in descriptors:
                os.close(descriptor)

    def live(self) -> list[int]:
        # An exited child's attempt is settled, or about to be: only live ones are renewed.
        return [a for a, running in list(self.running.items()) if running.exit_code() is None]

    def stop(self, reason: str) -> None:
        for attempt_id in list(self.running):
            self.cancel(attempt_id, reason)

    def release(self, reason: str) -> None:
        for attempt_id in list(self.running):
            self.leases.forget(attempt_id)
            stop_for_drain(self.engine, self.running.pop(attempt_id), SYSTEM, reason)
