"""The queue provider: worker agents claim QUEUED attempts of their pool from PostgreSQL.

Queuing the attempt (POOL, SLOT_KIND, PRIORITY, NOT_BEFORE on its row) is the submission, so
submit starts nothing: a worker claims it with one FOR UPDATE SKIP LOCKED statement. The
overseer never holds these attempts; their workers renew the leases, and a worker that goes
silent leaves leases that expire and are reconciled.
"""

from __future__ import annotations

import contextlib
import select
from collections.abc import Sequence

from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.transitions import cancel_queued_attempt, request_cancel
from etl_craft.enginedb.workers import live_workers
from etl_craft.pools.base import AttemptSpec, Capacity, HandleStatus, recorded_status


class QueuePool:
    submits = False
    leases = None  # workers own the attempts and their leases

    def __init__(self, engine: EngineDB, name: str = "default") -> None:
        self.engine, self.name = engine, name

    def capacity(self) -> Capacity:
        with self.engine.read() as conn:
            workers = live_workers(conn, self.name)
        return Capacity(
            {
                SlotKind.INGESTION: sum(w.registration.ingestion_slots for w in workers),
                SlotKind.WAREHOUSE: sum(w.registration.warehouse_slots for w in workers),
            }
        )

    def submit(self, spec: AttemptSpec) -> int:
        return spec.attempt_id  # queued already: a worker claims it

    def status(self, handle: int) -> HandleStatus:
        return recorded_status(self.engine, handle)

    def cancel(self, handle: int, reason: str) -> None:
        # A QUEUED attempt ends at once; a claimed one is stopped by its worker, which
        # acknowledges within a heartbeat.
        with self.engine.transaction(SYSTEM) as conn, contextlib.suppress(StaleTransitionError):
            if self.status(handle) is HandleStatus.QUEUED:
                cancel_queued_attempt(conn, handle, SYSTEM, message=reason)
            else:
                request_cancel(conn, handle, SYSTEM)

    def reconcile(self) -> dict[int, HandleStatus]:
        return {}  # workers hold their attempts; the lease reconciler settles silent ones

    def poll(self) -> None:
        return None

    def wait(self, timeout: float, also: Sequence[int] = ()) -> None:
        with contextlib.suppress(InterruptedError):
            select.select(list(also), [], [], timeout)

    def live(self) -> list[int]:
        return []

    def stop(self, reason: str) -> None:
        return None

    def release(self, reason: str) -> None:
        return None
