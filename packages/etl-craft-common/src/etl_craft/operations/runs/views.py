"""Frozen views of runs and task runs, as the CLI prints them and the API returns them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import ClassVar

from etl_craft.core.enums import RunStatus, TaskRunStatus
from etl_craft.core.errors import NotFoundError
from etl_craft.enginedb.connection import EngineReads
from etl_craft.enginedb.runs import read_pipeline_shape, read_run, read_task_runs


@dataclass(frozen=True)
class TaskRunView:
    task_code: str
    task_run_id: int | None
    status: TaskRunStatus | None  # None: the task has not run in this run
    attempts: int
    attempt_id: int | None  # the latest attempt: its log is GET /api/v1/attempts/{id}/log
    rows_written: int | None
    started_at: datetime | None
    ended_at: datetime | None
    error: str | None
    message: str | None


@dataclass(frozen=True)
class RunView:
    schema: ClassVar[str] = "etl-craft/run/1"
    run_id: int
    pipeline_code: str
    project_code: str
    run_key: str
    trigger_kind: str
    run_date: date
    status: RunStatus
    started_at: datetime | None
    ended_at: datetime | None
    message: str | None
    tasks: tuple[TaskRunView, ...]

    def counts(self) -> dict[str, int]:
        tally: dict[str, int] = {}
        for task in self.tasks:
            key = task.status.value if task.status else "NOT RUN"
            tally[key] = tally.get(key, 0) + 1
        return tally


def read_run_view(conn: EngineReads, run_id: int) -> RunView:
    run = read_run(conn, run_id)
    runs = read_task_runs(conn, run_id)
    shape = read_pipeline_shape(conn, run.pipeline_id)
    tasks = []
    for task in shape.tasks:
        row = runs.get(task.task_id)
        tasks.append(
            TaskRunView(
                task_code=task.task_code,
                task_run_id=row.task_run_id if row else None,
                status=row.status if row else None,
                attempts=row.attempt_count if row else 0,
                attempt_id=row.attempt_id if row else None,
                rows_written=row.rows_written if row else None,
                started_at=row.start_date if row else None,
                ended_at=row.end_date if row else None,
                error=row.error_message if row else None,
                message=row.message if row else None,
            )
        )
    return RunView(
        run_id=run.pipeline_run_id,
        pipeline_code=run.pipeline_code,
        project_code=run.project_code,
        run_key=run.run_key,
        trigger_kind=run.trigger_kind,
        run_date=run.run_date,
        status=run.status,
        started_at=run.start_date,
        ended_at=run.end_date,
        message=run.message,
        tasks=tuple(tasks),
    )


def pipeline_id_of(
    conn: EngineReads, project_code: str, pipeline_code: str, *, inactive: bool = False
) -> int:
    """The active pipeline's id; with ``inactive``, an inactive one's too, for commands that
    read or settle the runs it already has (history, status, cancel)."""
    query = "pipeline_by_code_any" if inactive else "pipeline_by_code"
    row = conn.one(query, project_code=project_code, pipeline_code=pipeline_code)
    if row is None:
        which = "pipeline" if inactive else "active pipeline"
        raise NotFoundError(
            f"project {project_code} has no {which} {pipeline_code!r}; list them with "
            "etl-craft list, or add it with a project migration"
        )
    return int(row["pipeline_id"])
