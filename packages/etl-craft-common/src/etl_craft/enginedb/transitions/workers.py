"""Status changes of worker agents, and the heartbeat that renews the leases of their attempts.

Workers exist only on a PostgreSQL Engine DB (the queue needs row locks that skip), so these
statements are PostgreSQL's alone. The caller owns the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.actor import Actor
from etl_craft.core.enums import WorkerStatus
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.transitions._apply import apply, notify
from etl_craft.enginedb.transitions.table import Entity
from etl_craft.enginedb.workers import SILENT_INTERVALS, WorkerRegistration


@dataclass(frozen=True)
class OwnedAttempt:
    attempt_id: int
    cancel_requested_at: datetime | None


@dataclass(frozen=True)
class WorkerBeat:
    """What a heartbeat found: the worker's status (None: no such worker) and the attempts
    whose leases it renewed (none once the worker is GONE)."""

    status: WorkerStatus | None
    attempts: tuple[OwnedAttempt, ...]


def register_worker(conn: EngineConnection, worker: WorkerRegistration) -> None:
    conn.run(
        "transition_register_worker",
        worker_id=worker.worker_id,
        pool=worker.pool,
        host=worker.host,
        pid=worker.pid,
        version=worker.version,
        schema_version=worker.schema_version,
        ingestion_slots=worker.ingestion_slots,
        warehouse_slots=worker.warehouse_slots,
        log_endpoint=worker.log_endpoint,
    )
    notify(conn, Entity.WORKER, worker.worker_id, WorkerStatus.ACTIVE.value)


def beat_worker(conn: EngineConnection, worker_id: str, *, lease_seconds: float) -> WorkerBeat:
    """Heartbeat the worker and renew the lease of every attempt it owns, in one statement,
    unless it is GONE: then it renews nothing and must stop what it runs."""
    rows = conn.all("transition_beat_worker", worker_id=worker_id, lease_seconds=lease_seconds)
    status = rows[0]["worker_status"]
    attempts = tuple(
        OwnedAttempt(int(row["attempt_id"]), as_utc(row["cancel_requested_at"]))
        for row in rows
        if row["attempt_id"] is not None
    )
    return WorkerBeat(None if status is None else WorkerStatus(status), attempts)


def drain_worker(conn: EngineConnection, worker_id: str, actor: Actor) -> None:
    apply(conn, Entity.WORKER, "drain_worker", worker_id, actor)


def retire_worker(conn: EngineConnection, worker_id: str, actor: Actor) -> None:
    """GONE, stamped STOPPED_AT: the worker stops."""
    apply(conn, Entity.WORKER, "retire_worker", worker_id, actor)


def mark_silent_workers_gone(conn: EngineConnection, interval_seconds: float) -> list[str]:
    """Declare GONE the workers silent for SILENT_INTERVALS heartbeat intervals; their ids."""
    rows = conn.all(
        "transition_mark_silent_workers_gone",
        silence_seconds=SILENT_INTERVALS * interval_seconds,
    )
    gone = sorted(str(row["worker_id"]) for row in rows)
    for worker_id in gone:
        notify(conn, Entity.WORKER, worker_id, WorkerStatus.GONE.value)
    return gone
