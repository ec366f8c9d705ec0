"""The local provider: one child process per attempt on this host, slots per kind.

It is what the foreground CLI uses, the overseer's pool on SQLite, and the pool of an overseer
run without workers. It claims an attempt for its owner, starts the task process, and records
what the child could not: it died, it ran out of time, or it was asked to stop.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import StaleTransitionError
from etl_craft.core.faults import fault_point
from etl_craft.enginedb.attempts import cancel_requests, read_invocation
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.transitions import claim_attempt
from etl_craft.pools.base import AttemptSpec, Capacity, HandleStatus, recorded_status
from etl_craft.runtime.launcher import (
    RunningAttempt,
    TaskSetup,
    claiming,
    settle_exit,
    stop_for_cancel,
    stop_for_drain,
    stop_for_timeout,
)
from etl_craft.runtime.reconcile import LEDGERED, LedgerLookup

CANCELLED = "cancelled by an operator"


@dataclass(frozen=True)
class LocalSettings:
    owner_id: str
    tasks: TaskSetup
    lease_seconds: float = 60.0


class LocalPool:
    name = "local"
    submits = True

    def __init__(
        self,
        engine: EngineDB,
        settings: LocalSettings,
        slots: Mapping[SlotKind, int],
        ledger: LedgerLookup | None = None,
    ) -> None:
        self.engine, self.settings, self.slots, self.ledger = engine, settings, slots, ledger
        self.running: dict[int, RunningAttempt] = {}
        self.kinds: dict[int, SlotKind] = {}
        self.ledgered: set[int] = set()
        self.seen: set[int] = set()

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
        launched = self.settings.tasks.spec(
            self.settings.owner_id, spec.attempt_id, where, spec.timeout_seconds
        )
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
        assert claim.running is not None
        self.running[spec.attempt_id] = claim.running
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
        if running is not None:
            stop_for_cancel(self.engine, running, SYSTEM, reason)

    def reconcile(self) -> dict[int, HandleStatus]:
        return {handle: self.status(handle) for handle in self.seen}

    def poll(self) -> None:
        for attempt_id, running in list(self.running.items()):
            if running.exit_code() is not None:
                ledger = self.ledger if attempt_id in self.ledgered else None
                settle_exit(self.engine, running, SYSTEM, ledger)
            elif running.overdue():
                stop_for_timeout(self.engine, running, SYSTEM)
            else:
                continue
            del self.running[attempt_id]
        if self.running:
            with self.engine.read() as conn:
                requested = cancel_requests(conn, self.settings.owner_id)
            for attempt_id in requested:
                self.cancel(attempt_id, CANCELLED)

    def wait(self, timeout: float, also: Sequence[int] = ()) -> None:
        """Until a child exits, a time limit comes due, ``also`` is readable, or ``timeout``."""
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
            stop_for_drain(self.engine, self.running.pop(attempt_id), SYSTEM, reason)
