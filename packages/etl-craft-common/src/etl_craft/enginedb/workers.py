"""Worker agents in the Engine DB: what they register and what is read of them.

Their status changes and heartbeats are transitions (transitions/workers.py).

Workers exist only on a PostgreSQL Engine DB (the queue needs row locks that skip), so these
statements are PostgreSQL's alone. The caller owns the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.enums import AttemptStatus, WorkerStatus
from etl_craft.core.errors import NotFoundError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, Row

# The overseer declares a worker GONE once this many heartbeat intervals pass without one.
SILENT_INTERVALS = 3


@dataclass(frozen=True)
class WorkerRegistration:
    worker_id: str
    pool: str
    host: str
    pid: int
    version: str
    schema_version: int
    ingestion_slots: int
    warehouse_slots: int
    log_endpoint: str | None = None  # where it serves its running attempts' logs


@dataclass(frozen=True)
class WorkerRow:
    registration: WorkerRegistration
    started_at: datetime
    heartbeat_at: datetime
    status: WorkerStatus

    @property
    def worker_id(self) -> str:
        return self.registration.worker_id


@dataclass(frozen=True)
class AttemptEnd:
    status: AttemptStatus
    error_message: str | None


def live_workers(conn: EngineConnection, pool: str) -> list[WorkerRow]:
    return [_worker(row) for row in conn.all("worker_live", pool=pool)]


def project_pool(conn: EngineConnection, project_code: str) -> str | None:
    """The DEFAULT_POOL of the active project with this code; None when there is no such project."""
    row = conn.one("worker_project_pool", project_code=project_code)
    return None if row is None else str(row["default_pool"])


def attempt_end(conn: EngineConnection, attempt_id: int) -> AttemptEnd:
    row = conn.one("worker_attempt_outcome", attempt_id=attempt_id)
    if row is None:
        raise NotFoundError(f"attempt {attempt_id} does not exist in this Engine DB")
    return AttemptEnd(AttemptStatus(row["status"]), row["error_message"])


def _worker(row: Row) -> WorkerRow:
    registration = WorkerRegistration(
        worker_id=str(row["worker_id"]),
        pool=str(row["pool"]),
        host=str(row["host"]),
        pid=int(row["pid"]),
        version=str(row["version"]),
        schema_version=int(row["schema_version"]),
        ingestion_slots=int(row["ingestion_slots"]),
        warehouse_slots=int(row["warehouse_slots"]),
    )
    started, heartbeat = as_utc(row["started_at"]), as_utc(row["heartbeat_at"])
    assert started is not None
    assert heartbeat is not None
    return WorkerRow(registration, started, heartbeat, WorkerStatus(row["status"]))
