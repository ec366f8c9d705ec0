"""Reads about runs: a run with its settings, its task runs, and its pipeline's graph."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from types import MappingProxyType
from typing import Any

from etl_craft.core.enums import (
    AttemptStatus,
    DependencyType,
    Handler,
    RunCondition,
    RunStatus,
    SlotKind,
    TaskRunStatus,
)
from etl_craft.core.errors import NotFoundError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineReads


@dataclass(frozen=True)
class RunRow:
    pipeline_run_id: int
    pipeline_id: int
    pipeline_code: str
    project_code: str
    run_key: str
    trigger_kind: str
    run_date: date
    status: RunStatus
    owner_id: str | None
    lease_expires_at: datetime | None
    start_date: datetime | None
    end_date: datetime | None
    max_parallel_tasks: int | None
    sla_minutes: int | None
    priority: int
    default_pool: str
    output_revision: int
    message: str | None
    project_max_running_tasks: int | None = None
    queued_at: datetime | None = None


@dataclass(frozen=True)
class TaskRunRow:
    task_run_id: int
    task_id: int
    status: TaskRunStatus
    rows_written: int | None
    attempt_count: int
    attempt_id: int | None
    attempt_status: AttemptStatus | None
    retryable: bool
    attempt_ended_at: datetime | None
    not_before: datetime | None
    owner_id: str | None
    cancel_requested_at: datetime | None
    message: str | None
    error_message: str | None
    start_date: datetime | None
    end_date: datetime | None


@dataclass(frozen=True)
class TaskRow:
    task_id: int
    task_code: str
    handler: Handler
    run_condition: RunCondition
    required_count: int | None
    pipeline_id: int
    pipeline_code: str


@dataclass(frozen=True)
class DependencyRow:
    task_dependency_id: int
    task_id: int
    depends_on_task_id: int
    dependency_type: DependencyType
    consume_repairs: bool
    upstream_task_code: str
    upstream_pipeline_id: int
    upstream_pipeline_code: str


@dataclass(frozen=True)
class PipelineShape:
    tasks: tuple[TaskRow, ...]
    dependencies: tuple[DependencyRow, ...]
    parameters: MappingProxyType[int, MappingProxyType[str, str | None]]


def _date(value: Any) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


def _instant(value: Any) -> datetime:
    found = as_utc(value)
    assert found is not None, "a NOT NULL timestamp column read as NULL"
    return found


def read_run(conn: EngineReads, run_id: int) -> RunRow:
    row = conn.one("run_row", pipeline_run_id=run_id)
    if row is None:
        raise NotFoundError(
            f"run {run_id} does not exist; list runs with etl-craft history --pipeline P"
        )
    return RunRow(
        pipeline_run_id=int(row["pipeline_run_id"]),
        pipeline_id=int(row["pipeline_id"]),
        pipeline_code=str(row["pipeline_code"]),
        project_code=str(row["project_code"]),
        run_key=str(row["run_key"]),
        trigger_kind=str(row["trigger_kind"]),
        run_date=_date(row["run_date"]),
        status=RunStatus(row["status"]),
        owner_id=row["owner_id"],
        lease_expires_at=as_utc(row["lease_expires_at"]),
        start_date=as_utc(row["start_date"]),
        end_date=as_utc(row["end_date"]),
        max_parallel_tasks=row["max_parallel_tasks"],
        sla_minutes=row["sla_minutes"],
        priority=int(row["priority"]),
        default_pool=str(row["default_pool"]),
        project_max_running_tasks=row["project_max_running_tasks"],
        output_revision=int(row["output_revision"]),
        message=row["message"],
        queued_at=as_utc(row["queued_at"]),
    )


def read_task_runs(conn: EngineReads, run_id: int) -> dict[int, TaskRunRow]:
    runs = {}
    for row in conn.all("run_task_runs", pipeline_run_id=run_id):
        status = row["attempt_status"]
        runs[int(row["task_id"])] = TaskRunRow(
            task_run_id=int(row["task_run_id"]),
            task_id=int(row["task_id"]),
            status=TaskRunStatus(row["status"]),
            rows_written=row["rows_written"],
            attempt_count=int(row["attempt_count"]),
            attempt_id=row["attempt_id"],
            attempt_status=AttemptStatus(status) if status else None,
            retryable=row["retryable"] == "Y",
            attempt_ended_at=as_utc(row["attempt_ended_at"]),
            not_before=as_utc(row["not_before"]),
            owner_id=row["owner_id"],
            cancel_requested_at=as_utc(row["cancel_requested_at"]),
            message=row["message"],
            error_message=row["error_message"],
            start_date=as_utc(row["start_date"]),
            end_date=as_utc(row["end_date"]),
        )
    return runs


def read_pipeline_shape(conn: EngineReads, pipeline_id: int) -> PipelineShape:
    tasks = tuple(
        TaskRow(
            task_id=int(row["task_id"]),
            task_code=str(row["task_code"]),
            handler=Handler(row["handler"]),
            run_condition=RunCondition(row["run_condition"]),
            required_count=row["required_count"],
            pipeline_id=int(row["pipeline_id"]),
            pipeline_code=str(row["pipeline_code"]),
        )
        for row in conn.all("pipeline_tasks", pipeline_id=pipeline_id)
    )
    dependencies = tuple(
        DependencyRow(
            task_dependency_id=int(row["task_dependency_id"]),
            task_id=int(row["task_id"]),
            depends_on_task_id=int(row["depends_on_task_id"]),
            dependency_type=DependencyType(row["dependency_type"]),
            consume_repairs=row["consume_repairs"] == "Y",
            upstream_task_code=str(row["upstream_task_code"]),
            upstream_pipeline_id=int(row["upstream_pipeline_id"]),
            upstream_pipeline_code=str(row["upstream_pipeline_code"]),
        )
        for row in conn.all("pipeline_task_dependencies", pipeline_id=pipeline_id)
    )
    parameters: defaultdict[int, dict[str, str | None]] = defaultdict(dict)
    for row in conn.all("pipeline_task_parameters", pipeline_id=pipeline_id):
        parameters[int(row["task_id"])][str(row["name"])] = row["value"]
    frozen = {task: MappingProxyType(values) for task, values in parameters.items()}
    return PipelineShape(tasks, dependencies, MappingProxyType(frozen))


@dataclass(frozen=True)
class QueuedAttemptRow:
    attempt_id: int
    task_id: int
    attempt_number: int
    not_before: datetime | None
    queued_at: datetime
    slot_kind: SlotKind

    @property
    def due_at(self) -> datetime:
        """When it may be claimed: queued, or the end of a retry's delay."""
        return max(self.queued_at, self.not_before or self.queued_at)


def queued_attempts(conn: EngineReads, run_id: int) -> list[QueuedAttemptRow]:
    """The run's QUEUED attempts, in queue order."""
    return [
        QueuedAttemptRow(
            attempt_id=int(row["attempt_id"]),
            task_id=int(row["task_id"]),
            attempt_number=int(row["attempt_number"]),
            not_before=as_utc(row["not_before"]),
            queued_at=_instant(row["queued_at"]),
            slot_kind=SlotKind(row["slot_kind"]),
        )
        for row in conn.all("queued_attempts_of_run", pipeline_run_id=run_id)
    ]
