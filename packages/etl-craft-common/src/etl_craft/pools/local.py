"""The local provider: one child process per attempt on this host, slots per kind.

It is what the foreground CLI uses, the overseer's pool on SQLite, and the pool of an overseer
run without workers. It claims an attempt for its owner and starts the task process; its
AttemptOwner holds it from then on and records what the child could not: it died, it ran out of
time, or it was asked to stop (runtime/attempt_owner). An attempt whose lease renewal was
refused is no longer its own, and one whose lease it could not renew for too long is about to
be; its task process is stopped at once (leases.py).
"""

from __future__ import annotations

import select
import time
from collections.abc import Mapping, Sequence

from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import (
    ConfigurationError,
    EngineDBError,
    NotFoundError,
    StaleTransitionError,
)
from etl_craft.core.faults import fault_point
from etl_craft.enginedb.attempts import cancel_requests, read_invocation
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.transitions import claim_attempt
from etl_craft.pools.base import AttemptSpec, Capacity, HandleStatus, recorded_status
from etl_craft.runtime.attempt_owner import AttemptOwner, Held
from etl_craft.runtime.bundles import ProjectFiles
from etl_craft.runtime.launcher import claiming, launch_spec
from etl_craft.runtime.leases import LeaseWatch
from etl_craft.runtime.log_archive import AttemptLogs
from etl_craft.runtime.reconcile import LedgerLookup


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
        self.engine, self.settings, self.slots = engine, settings, slots
        self.attempts = AttemptOwner(
            engine,
            SYSTEM,
            settings.owner_id,
            settings.lease_seconds,
            ledger,
            logs=AttemptLogs.configured(settings.log_tail_bytes, settings.log_store),
        )
        self.files = ProjectFiles(settings)
        self.seen: set[int] = set()

    @property
    def leases(self) -> LeaseWatch:
        return self.attempts.leases

    @property
    def running(self) -> Mapping[int, Held]:
        return self.attempts.held

    def capacity(self) -> Capacity:
        return Capacity(self.slots, self.attempts.used())

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
                invocation = read_invocation(claim.conn, spec.attempt_id)
                try:
                    files = self.files.for_attempt(claim.conn, invocation)
                except (ConfigurationError, NotFoundError) as error:
                    message = f"the project's files could not be had: {error}"
                    self.attempts.fail(claim.conn, spec.attempt_id, message, retryable=True)
                    return spec.attempt_id
                running = claim.start(files.launch(launched), invocation)
        except StaleTransitionError:
            return spec.attempt_id  # cancelled or claimed by another owner meanwhile
        except EngineDBError:
            self.seen.discard(spec.attempt_id)  # never claimed: submitted again once it answers
            raise
        self.attempts.hold(running, invocation, spec.slot_kind, spec.handler, sent)
        fault_point("after_launch")
        return spec.attempt_id

    def status(self, handle: int) -> HandleStatus:
        if handle not in self.seen:
            return HandleStatus.UNKNOWN
        if handle in self.attempts.held:
            return HandleStatus.RUNNING
        found = recorded_status(self.engine, handle)
        # Claimed by another owner meanwhile: this pool can't tell what became of it.
        return HandleStatus.UNKNOWN if found is HandleStatus.RUNNING else found

    def cancel(self, handle: int, reason: str) -> None:
        self.attempts.cancel(handle, reason)

    def reconcile(self) -> dict[int, HandleStatus]:
        return {handle: self.status(handle) for handle in self.seen}

    def poll(self) -> None:
        self.attempts.fence()
        self.attempts.record_fenced()
        self.attempts.settle()
        if self.attempts.held:
            with self.engine.read() as conn:
                requested = cancel_requests(conn, self.settings.owner_id)
            self.attempts.cancel_requested(requested)

    def wait(self, timeout: float, also: Sequence[int] = ()) -> None:
        """Until a child exits, a time limit or a lease's fence comes due, ``also`` is
        readable, or ``timeout``."""
        due = self.attempts.seconds_to_act()
        if due is not None:
            timeout = min(timeout, due)
        with self.attempts.exits() as descriptors:
            if descriptors or also:
                select.select([*descriptors, *also], [], [], timeout)
            else:
                time.sleep(timeout)

    def live(self) -> list[int]:
        return self.attempts.live()

    def stop(self, reason: str) -> None:
        for attempt_id in list(self.attempts.held):
            self.attempts.cancel(attempt_id, reason)

    def release(self, reason: str) -> None:
        self.attempts.drain(reason)
