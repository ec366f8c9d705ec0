"""A pipeline's runs as lists: the live ones, the newest ones, the one with a key; and the lock
that serialises every caller that finds or creates a pipeline's run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from etl_craft.core.enums import RunStatus
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, EngineReads, Row


@dataclass(frozen=True)
class ListedRun:
    pipeline_run_id: int
    run_key: str
    trigger_kind: str
    run_date: date
    status: RunStatus

    def listed(self) -> str:
        """How a message that offers runs to choose from names this one."""
        return f"run {self.pipeline_run_id} key {self.run_key} ({self.status}, {self.run_date})"


@dataclass(frozen=True)
class LiveRun(ListedRun):
    owner_id: str | None
    lease_expires_at: datetime | None


@dataclass(frozen=True)
class PastRun(ListedRun):
    start_date: datetime | None
    end_date: datetime | None
    started_by: str


def _date(value: Any) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


def _listed(row: Row) -> dict[str, Any]:
    return {
        "pipeline_run_id": int(row["pipeline_run_id"]),
        "run_key": str(row["run_key"]),
        "trigger_kind": str(row["trigger_kind"]),
        "run_date": _date(row["run_date"]),
        "status": RunStatus(row["status"]),
    }


def lock_pipeline_runs(conn: EngineConnection, pipeline_id: int) -> None:
    """Hold back, until this transaction ends, every other caller that finds or creates a run
    of the pipeline: two callers at once must find the same run, never create one each."""
    conn.run("lock_pipeline_runs", pipeline_id=pipeline_id)


def live_runs(conn: EngineReads, pipeline_id: int) -> tuple[LiveRun, ...]:
    """The pipeline's QUEUED and IN-PROGRESS runs, oldest first."""
    return tuple(
        LiveRun(
            **_listed(row),
            owner_id=row["owner_id"],
            lease_expires_at=as_utc(row["lease_expires_at"]),
        )
        for row in conn.all("live_runs_of_pipeline", pipeline_id=pipeline_id)
    )


def newest_runs(
    conn: EngineReads, pipeline_id: int, limit: int, before: int | None = None
) -> tuple[PastRun, ...]:
    """The pipeline's newest runs, newest first; with ``before``, those older than that run."""
    if before is None:
        rows = conn.all("runs_of_pipeline", pipeline_id=pipeline_id, limit=limit)
    else:
        rows = conn.all(
            "runs_of_pipeline_before", pipeline_id=pipeline_id, before=before, limit=limit
        )
    return tuple(
        PastRun(
            **_listed(row),
            start_date=as_utc(row["start_date"]),
            end_date=as_utc(row["end_date"]),
            started_by=str(row["started_by"]),
        )
        for row in rows
    )


def run_id_by_key(conn: EngineReads, pipeline_id: int, run_key: str) -> int | None:
    row = conn.one("run_by_key", pipeline_id=pipeline_id, run_key=run_key)
    return None if row is None else int(row["pipeline_run_id"])


def pipeline_code_of_run(conn: EngineReads, run_id: int, project_code: str) -> str | None:
    """The code of the pipeline of a run of the project, found by the run's id alone."""
    row = conn.one("run_pipeline_code", run_id=run_id, project_code=project_code)
    return None if row is None else str(row["pipeline_code"])
