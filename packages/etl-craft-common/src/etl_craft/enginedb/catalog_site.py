"""What the catalog site shows of runs: only the runs it shows, read for every pipeline at once.

Each read is one statement for the whole project, whatever its number of pipelines and tasks,
so that a build issues the same statements for a hundred tasks as for a thousand.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from etl_craft.core.enums import RunStatus, TaskRunStatus
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, Row
from etl_craft.enginedb.metadata import as_date


@dataclass(frozen=True)
class ShownRun:
    pipeline_id: int
    pipeline_run_id: int
    run_key: str
    trigger_kind: str
    run_date: date
    status: RunStatus
    started_at: datetime | None
    ended_at: datetime | None


@dataclass(frozen=True)
class ShownTaskRun:
    pipeline_run_id: int
    task_id: int
    status: TaskRunStatus
    rows_written: int | None
    source_count: int | None
    insert_count: int | None
    update_count: int | None
    delete_count: int | None
    started_at: datetime | None
    ended_at: datetime | None


@dataclass(frozen=True)
class Descriptions:
    tasks: dict[int, str]
    rules: dict[int, str]


def read_shown_runs(
    conn: EngineConnection, project_id: int, per_pipeline: int
) -> tuple[ShownRun, ...]:
    """The newest ``per_pipeline`` runs of each pipeline, newest first within a pipeline."""
    rows = conn.all("catalog_shown_runs", project_id=project_id, per_pipeline=per_pipeline)
    return tuple(_run(row) for row in rows)


def read_shown_task_runs(
    conn: EngineConnection, project_id: int, per_pipeline: int
) -> tuple[ShownTaskRun, ...]:
    """The task runs of the runs ``read_shown_runs`` returns, newest first within a task."""
    rows = conn.all("catalog_shown_task_runs", project_id=project_id, per_pipeline=per_pipeline)
    return tuple(_task_run(row) for row in rows)


def read_descriptions(conn: EngineConnection, project_id: int) -> Descriptions:
    found = Descriptions({}, {})
    for row in conn.all("catalog_descriptions", project_id=project_id):
        into = found.tasks if row["kind"] == "TASK" else found.rules
        into[int(row["id"])] = str(row["description"])
    return found


def _run(row: Row) -> ShownRun:
    return ShownRun(
        pipeline_id=int(row["pipeline_id"]),
        pipeline_run_id=int(row["pipeline_run_id"]),
        run_key=str(row["run_key"]),
        trigger_kind=str(row["trigger_kind"]),
        run_date=as_date(row["run_date"]),
        status=RunStatus(row["status"]),
        started_at=as_utc(row["start_date"]),
        ended_at=as_utc(row["end_date"]),
    )


def _task_run(row: Row) -> ShownTaskRun:
    return ShownTaskRun(
        pipeline_run_id=int(row["pipeline_run_id"]),
        task_id=int(row["task_id"]),
        status=TaskRunStatus(row["status"]),
        rows_written=_count(row["rows_written"]),
        source_count=_count(row["source_count"]),
        insert_count=_count(row["insert_count"]),
        update_count=_count(row["update_count"]),
        delete_count=_count(row["delete_count"]),
        started_at=as_utc(row["start_date"]),
        ended_at=as_utc(row["end_date"]),
    )


def _count(value: object) -> int | None:
    return None if value is None else int(str(value))
