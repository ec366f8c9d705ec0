"""Reads for schedules: the active scheduled pipelines and the latest tick each has a run for."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, Row


@dataclass(frozen=True)
class ScheduledPipeline:
    pipeline_id: int
    pipeline_code: str
    project_code: str
    run_schedule: str
    schedule_timezone: str | None
    project_timezone: str
    # ISO text as stored: SQLite keeps any text in a DATE column, and one unreadable value
    # must stop only its own pipeline's schedule, so the caller parses it.
    start_date: str | None
    catchup: bool
    max_catchup_runs: int
    queue_on_overlap: bool
    priority: int
    created_at: datetime | None
    latest_run_key: str | None


def read_scheduled_pipelines(conn: EngineConnection) -> list[ScheduledPipeline]:
    return [_pipeline(row) for row in conn.all("scheduled_pipelines")]


def first_overseer_start(conn: EngineConnection) -> datetime | None:
    return as_utc(conn.scalar("first_overseer_start"))


def latest_schedule_run_key(conn: EngineConnection, pipeline_id: int) -> str | None:
    key = conn.scalar("latest_schedule_run_key", pipeline_id=pipeline_id)
    return None if key is None else str(key)


def _pipeline(row: Row) -> ScheduledPipeline:
    start = row["start_date"]
    return ScheduledPipeline(
        pipeline_id=int(row["pipeline_id"]),
        pipeline_code=str(row["pipeline_code"]),
        project_code=str(row["project_code"]),
        run_schedule=str(row["run_schedule"]),
        schedule_timezone=row["schedule_timezone"],
        project_timezone=str(row["project_timezone"]),
        start_date=None if start is None else str(start),
        catchup=row["catchup"] == "Y",
        max_catchup_runs=int(row["max_catchup_runs"]),
        queue_on_overlap=row["overlap_policy"] == "QUEUE",
        priority=int(row["priority"]),
        created_at=as_utc(row["created_at"]),
        latest_run_key=row["latest_run_key"],
    )
