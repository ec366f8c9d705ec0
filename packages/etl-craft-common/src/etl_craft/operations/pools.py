"""Workers and pools: each pool's capacity, slots in use and queue, and each worker's heartbeat.

Capacity is the slots of the pool's ACTIVE workers; in use, the attempts CLAIMED or RUNNING in
it (a foreground supervisor's too, which has no worker row); the queue, the QUEUED attempts
that are due, and how long the oldest has been due. Ages are on the Engine DB's clock.
Worker agents exist only on a PostgreSQL Engine DB; on SQLite the list is empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from etl_craft.core.enums import AttemptStatus, SlotKind, WorkerStatus
from etl_craft.core.time import as_utc
from etl_craft.enginedb.overseers import active_overseer
from etl_craft.enginedb.overview import engine_now, pool_load, workers
from etl_craft.operations.context import OperationContext

WORKERS_SHOWN = 200
HELD = (AttemptStatus.CLAIMED.value, AttemptStatus.RUNNING.value)


@dataclass(frozen=True)
class PoolSlots:
    pool: str
    slot_kind: SlotKind
    capacity: int  # slots of the pool's ACTIVE workers
    in_use: int  # attempts CLAIMED or RUNNING
    queued: int  # QUEUED attempts that are due
    retries_waiting: int  # QUEUED retries, due or not
    oldest_queued_seconds: float  # 0 when none is due


@dataclass(frozen=True)
class WorkerView:
    worker_id: str
    pool: str
    host: str
    pid: int
    version: str
    status: WorkerStatus
    ingestion_slots: int
    warehouse_slots: int
    attempts: int  # CLAIMED or RUNNING attempts it holds now
    started_at: datetime
    heartbeat_at: datetime
    heartbeat_seconds: float  # since its last heartbeat
    stopped_at: datetime | None


@dataclass(frozen=True)
class OverseerView:
    overseer_id: str
    host: str
    heartbeat_seconds: float | None


@dataclass(frozen=True)
class Pools:
    schema: ClassVar[str] = "etl-craft/pools/1"
    checked_at: datetime
    pools: tuple[PoolSlots, ...]
    workers: tuple[WorkerView, ...]
    overseer: OverseerView | None  # the leading `etl-craft server`, when one runs


def pools(ctx: OperationContext) -> Pools:
    with ctx.engine.read() as conn:
        now = engine_now(conn)
        load = pool_load(conn)
        found = [_worker(row, now) for row in workers(conn, WORKERS_SHOWN)]
        leader = active_overseer(conn)
    overseer = None
    if leader is not None:
        beat = None if leader.heartbeat_at is None else _age(now, leader.heartbeat_at)
        overseer = OverseerView(leader.overseer_id, leader.host, beat)
    return Pools(now, _slots(load, found, now), tuple(found), overseer)


@dataclass
class _Tally:
    capacity: int = 0
    in_use: int = 0
    queued: int = 0
    retries: int = 0
    oldest: float = 0.0


def _slots(load: list[Any], found: list[WorkerView], now: datetime) -> tuple[PoolSlots, ...]:
    names = sorted({str(row["pool"]) for row in load} | {w.pool for w in found})
    tallies = {(pool, kind): _Tally() for pool in names for kind in SlotKind}
    for worker in found:
        if worker.status is WorkerStatus.ACTIVE:
            tallies[(worker.pool, SlotKind.INGESTION)].capacity += worker.ingestion_slots
            tallies[(worker.pool, SlotKind.WAREHOUSE)].capacity += worker.warehouse_slots
    for row in load:
        if row["status"] is None:
            continue  # the row that lists a pool with no live attempt
        tally = tallies[(str(row["pool"]), SlotKind(row["slot_kind"]))]
        if row["status"] in HELD:
            tally.in_use += int(row["attempts"])
        elif row["status"] == AttemptStatus.QUEUED.value:
            tally.queued, tally.retries = int(row["due"]), int(row["retries"])
            oldest = as_utc(row["oldest_due"])
            tally.oldest = 0.0 if oldest is None else _age(now, oldest)
    return tuple(
        PoolSlots(pool, kind, t.capacity, t.in_use, t.queued, t.retries, t.oldest)
        for (pool, kind), t in tallies.items()
    )


def _worker(row: Any, now: datetime) -> WorkerView:
    started, beat = as_utc(row["started_at"]), as_utc(row["heartbeat_at"])
    assert started is not None
    assert beat is not None
    return WorkerView(
        worker_id=str(row["worker_id"]),
        pool=str(row["pool"]),
        host=str(row["host"]),
        pid=int(row["pid"]),
        version=str(row["version"]),
        status=WorkerStatus(row["status"]),
        ingestion_slots=int(row["ingestion_slots"]),
        warehouse_slots=int(row["warehouse_slots"]),
        attempts=int(row["attempts"]),
        started_at=started,
        heartbeat_at=beat,
        heartbeat_seconds=_age(now, beat),
        stopped_at=as_utc(row["stopped_at"]),
    )


def _age(now: datetime, then: datetime) -> float:
    return max(0.0, (now - then).total_seconds())
