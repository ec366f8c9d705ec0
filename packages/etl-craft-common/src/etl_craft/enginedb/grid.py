"""Reads for the runs grid and a run's attempts: a page of runs in a fixed number of statements.

A page of runs is read with one statement, their task runs with a second and the columns (the
active tasks of the page's pipelines) with a third, whatever the number of runs on the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from etl_craft.core.enums import AttemptStatus, RunStatus, TaskRunStatus
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineReads

NO_LATER_RUN = 2**62  # a run id above any real one: the first page has no "before"


@dataclass(frozen=True)
class GridQuery:
    project_code: str
    limit: int
    before: int | None
    since: date
    until: date
    pipeline_code: str | None
    status: str | None
    trigger_kind: str | None


@dataclass(frozen=True)
class RunFacts:
    """One pipeline run as the history and the runs grid list it."""

    run_id: int
    run_key: str
    trigger_kind: str
    run_date: date
    status: RunStatus
    started_at: datetime | None
    ended_at: datetime | None
    started_by: str


@dataclass(frozen=True)
class GridRunRow(RunFacts):
    pipeline_id: int
    pipeline_code: str


@dataclass(frozen=True)
class GridTaskRunRow:
    run_id: int
    task_id: int
    task_code: str
    status: TaskRunStatus
    attempts: int
    rows_written: int | None
    attempt_id: int | None
    attempt_started_at: datetime | None  # of the latest attempt
    attempt_ended_at: datetime | None


@dataclass(frozen=True)
class GridTaskRow:
    pipeline_id: int
    task_id: int
    task_code: str


@dataclass(frozen=True)
class AttemptFacts:
    """One attempt as the run page shows it, whichever task it belongs to."""

    attempt_id: int
    attempt_number: int
    status: AttemptStatus
    queued_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    exit_code: int | None
    rows_written: int | None
    owner_id: str | None
    host: str | None
    error: str | None
    requested_by: str


@dataclass(frozen=True)
class AttemptRow(AttemptFacts):
    task_run_id: int
    task_code: str


def _date(value: Any) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


def read_grid_runs(conn: EngineReads, query: GridQuery) -> list[GridRunRow]:
    rows = conn.all(
        "grid_runs",
        project_code=query.project_code,
        before=NO_LATER_RUN if query.before is None else query.before,
        since=query.since,
        until=query.until,
        pipeline_code=query.pipeline_code,
        status=query.status,
        trigger_kind=query.trigger_kind,
        limit=query.limit,
    )
    return [
        GridRunRow(
            run_id=int(row["pipeline_run_id"]),
            pipeline_id=int(row["pipeline_id"]),
            pipeline_code=str(row["pipeline_code"]),
            run_key=str(row["run_key"]),
            trigger_kind=str(row["trigger_kind"]),
            run_date=_date(row["run_date"]),
            status=RunStatus(row["status"]),
            started_at=as_utc(row["start_date"]),
            ended_at=as_utc(row["end_date"]),
            started_by=str(row["started_by"]),
        )
        for row in rows
    ]


def read_grid_task_runs(conn: EngineReads, run_ids: Sequence[int]) -> list[GridTaskRunRow]:
    rows = conn.all("grid_task_runs", run_id_list=list(run_ids)) if run_ids else []
    return [
        GridTaskRunRow(
            run_id=int(row["pipeline_run_id"]),
            task_id=int(row["task_id"]),
            task_code=str(row["task_code"]),
            status=TaskRunStatus(row["status"]),
            attempts=int(row["attempt_count"]),
            rows_written=row["rows_written"],
            attempt_id=row["attempt_id"],
            attempt_started_at=as_utc(row["attempt_started_at"]),
            attempt_ended_at=as_utc(row["attempt_ended_at"]),
        )
        for row in rows
    ]


def read_grid_tasks(conn: EngineReads, pipeline_ids: Sequence[int]) -> list[GridTaskRow]:
    rows = conn.all("grid_tasks", pipeline_id_list=list(pipeline_ids)) if pipeline_ids else []
    return [
        GridTaskRow(int(row["pipeline_id"]), int(row["task_id"]), str(row["task_code"]))
        for row in rows
    ]


def read_run_attempts(conn: EngineReads, run_id: int) -> list[AttemptRow]:
    times = ("queued_at", "started_at", "ended_at")
    found = []
    for row in conn.all("run_attempts", pipeline_run_id=run_id):
        values: dict[str, Any] = {
            key: as_utc(row[key]) if key in times else row[key] for key in row
        }
        values["status"] = AttemptStatus(row["status"])
        found.append(AttemptRow(**values))
    return found
