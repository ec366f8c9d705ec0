"""A project's metadata as read from its CFG_ rows, plus what list shows from AUD_ tables.

One snapshot per read: validate, list, graph and steps judge the rows together, so they are
read in one transaction (one consistent snapshot on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from types import MappingProxyType
from typing import Any

from etl_craft.core.enums import DependencyType, Handler, RunCondition, RunStatus
from etl_craft.core.errors import NotFoundError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineReads, Row


@dataclass(frozen=True)
class PipelineRow:
    pipeline_id: int
    code: str
    description: str | None
    run_schedule: str | None
    schedule_timezone: str | None
    active: bool


@dataclass(frozen=True)
class TaskRow:
    task_id: int
    pipeline_id: int
    code: str
    handler: Handler
    run_condition: RunCondition
    required_count: int | None
    active: bool
    parameters: Mapping[str, str | None]

    def parameter(self, name: str) -> str | None:
        """The value of ``name`` with surrounding blanks removed; blank text counts as unset."""
        value = self.parameters.get(name)
        return None if value is None else (value.strip() or None)


@dataclass(frozen=True)
class PipelineParameterRow:
    pipeline_id: int
    name: str
    value: str | None
    type: str


@dataclass(frozen=True)
class TaskDependencyRow:
    dependency_id: int
    task_id: int
    upstream_task_id: int
    type: DependencyType
    upstream_task_code: str
    upstream_handler: Handler
    upstream_task_active: bool
    upstream_pipeline_id: int
    upstream_pipeline_code: str
    upstream_pipeline_active: bool


@dataclass(frozen=True)
class PipelineDependencyRow:
    dependency_id: int
    pipeline_id: int
    upstream_pipeline_id: int
    type: DependencyType
    upstream_pipeline_code: str
    upstream_pipeline_active: bool
    upstream_project_code: str | None = None  # None: the same project

    @property
    def upstream_name(self) -> str:
        """The upstream as a message names it: with its project when that is another one."""
        if self.upstream_project_code is None:
            return self.upstream_pipeline_code
        return f"{self.upstream_pipeline_code} of project {self.upstream_project_code}"


@dataclass(frozen=True)
class BusinessRuleRow:
    rule_id: int
    task_id: int
    code: str
    rule_type: str
    target_table: str
    key_columns: str
    rule_sql: str
    wave: int


@dataclass(frozen=True)
class ProjectMetadata:
    project_id: int
    project_code: str
    timezone: str
    pipelines: tuple[PipelineRow, ...]
    tasks: tuple[TaskRow, ...]
    pipeline_parameters: tuple[PipelineParameterRow, ...]
    task_dependencies: tuple[TaskDependencyRow, ...]
    pipeline_dependencies: tuple[PipelineDependencyRow, ...]
    business_rules: tuple[BusinessRuleRow, ...]

    def pipeline(self, code: str) -> PipelineRow:
        """The active pipeline ``code``; NotFoundError naming the active ones otherwise."""
        for pipeline in self.pipelines:
            if pipeline.code == code and pipeline.active:
                return pipeline
        known = ", ".join(p.code for p in self.pipelines if p.active) or "none"
        raise NotFoundError(
            f"pipeline {code!r} is not an active pipeline of project {self.project_code}; "
            f"expected one of: {known}; check --pipeline or run etl-craft list"
        )

    def pipeline_by_id(self, pipeline_id: int) -> PipelineRow:
        return next(p for p in self.pipelines if p.pipeline_id == pipeline_id)

    def tasks_of(self, pipeline_id: int, *, active_only: bool = True) -> tuple[TaskRow, ...]:
        return tuple(
            task
            for task in self.tasks
            if task.pipeline_id == pipeline_id and (task.active or not active_only)
        )

    def dependencies_of(self, task_id: int) -> tuple[TaskDependencyRow, ...]:
        return tuple(d for d in self.task_dependencies if d.task_id == task_id)

    def pipeline_dependencies_of(self, pipeline_id: int) -> tuple[PipelineDependencyRow, ...]:
        return tuple(d for d in self.pipeline_dependencies if d.pipeline_id == pipeline_id)


@dataclass(frozen=True)
class LastRun:
    pipeline_run_id: int
    status: RunStatus
    run_date: date
    ended_at: datetime | None


@dataclass(frozen=True)
class OpenPause:
    pipeline_id: int | None  # None pauses every pipeline of the project
    reason: str
    paused_at: datetime
    paused_by: str


def read_project_metadata(conn: EngineReads, project_code: str) -> ProjectMetadata:
    project = conn.one("metadata_project", project_code=project_code)
    if project is None:
        listed = ", ".join(read_active_project_codes(conn)) or "none yet"
        raise NotFoundError(
            f"project {project_code!r} is not in the Engine DB (its projects: {listed}); "
            "choose one with --project, or create it: etl-craft init-db, then etl-craft "
            "migrate from the project's folder"
        )
    project_id = int(project["project_id"])
    parameters: dict[int, dict[str, str | None]] = {}
    for row in conn.all("metadata_task_parameters", project_id=project_id):
        parameters.setdefault(int(row["task_id"]), {})[row["name"]] = row["value"]
    return ProjectMetadata(
        project_id=project_id,
        project_code=str(project["project_code"]),
        timezone=str(project["timezone"]),
        pipelines=_rows(conn, "metadata_pipelines", project_id, _pipeline),
        tasks=tuple(
            _task(row, parameters.get(int(row["task_id"]), {}))
            for row in conn.all("metadata_tasks", project_id=project_id)
        ),
        pipeline_parameters=_rows(
            conn, "metadata_pipeline_parameters", project_id, _pipeline_parameter
        ),
        task_dependencies=_rows(conn, "metadata_task_dependencies", project_id, _task_dependency),
        pipeline_dependencies=_rows(
            conn, "metadata_pipeline_dependencies", project_id, _pipeline_dependency
        ),
        business_rules=_rows(conn, "metadata_business_rules", project_id, _business_rule),
    )


@dataclass(frozen=True)
class PipelineEdge:
    """A dependency of pipeline ``pipeline_id`` (of ``project_code``) on another, any project's."""

    pipeline_id: int
    upstream_pipeline_id: int
    project_code: str
    pipeline_code: str


def read_pipeline_edges(conn: EngineReads) -> tuple[PipelineEdge, ...]:
    return tuple(
        PipelineEdge(
            int(row["pipeline_id"]),
            int(row["upstream_pipeline_id"]),
            str(row["project_code"]),
            str(row["pipeline_code"]),
        )
        for row in conn.all("metadata_pipeline_edges")
    )


def read_project_timezone(conn: EngineReads, project_code: str) -> str | None:
    """The active project's time zone; None when there is no such project."""
    project = conn.one("metadata_project", project_code=project_code)
    return None if project is None else str(project["timezone"])


def read_active_project_codes(conn: EngineReads) -> tuple[str, ...]:
    return tuple(str(row["project_code"]) for row in conn.all("metadata_active_projects"))


def read_last_runs(conn: EngineReads, project_id: int) -> dict[int, LastRun]:
    return {
        int(row["pipeline_id"]): LastRun(
            pipeline_run_id=int(row["pipeline_run_id"]),
            status=RunStatus(row["status"]),
            run_date=as_date(row["run_date"]),
            ended_at=as_utc(row["end_date"]),
        )
        for row in conn.all("metadata_last_runs", project_id=project_id)
    }


def read_open_pauses(conn: EngineReads, project_id: int) -> tuple[OpenPause, ...]:
    return tuple(
        OpenPause(
            pipeline_id=None if row["pipeline_id"] is None else int(row["pipeline_id"]),
            reason=str(row["reason"]),
            paused_at=_instant(row["paused_at"]),
            paused_by=str(row["paused_by"]),
        )
        for row in conn.all("metadata_open_pauses", project_id=project_id)
    )


def _rows(conn: EngineReads, name: str, project_id: int, build: Any) -> tuple[Any, ...]:
    return tuple(build(row) for row in conn.all(name, project_id=project_id))


def _flag(value: object) -> bool:
    return value == "Y"


def _pipeline(row: Row) -> PipelineRow:
    return PipelineRow(
        pipeline_id=int(row["pipeline_id"]),
        code=str(row["pipeline_code"]),
        description=row["description"],
        run_schedule=row["run_schedule"],
        schedule_timezone=row["schedule_timezone"],
        active=_flag(row["active_flag"]),
    )


def _task(row: Row, parameters: dict[str, str | None]) -> TaskRow:
    count = row["required_count"]
    return TaskRow(
        task_id=int(row["task_id"]),
        pipeline_id=int(row["pipeline_id"]),
        code=str(row["task_code"]),
        handler=Handler(row["handler"]),
        run_condition=RunCondition(row["run_condition"]),
        required_count=None if count is None else int(count),
        active=_flag(row["active_flag"]),
        parameters=MappingProxyType(parameters),
    )


def _pipeline_parameter(row: Row) -> PipelineParameterRow:
    return PipelineParameterRow(
        pipeline_id=int(row["pipeline_id"]),
        name=str(row["name"]),
        value=row["value"],
        type=str(row["type"]),
    )


def _task_dependency(row: Row) -> TaskDependencyRow:
    return TaskDependencyRow(
        dependency_id=int(row["dependency_id"]),
        task_id=int(row["task_id"]),
        upstream_task_id=int(row["upstream_task_id"]),
        type=DependencyType(row["dependency_type"]),
        upstream_task_code=str(row["upstream_task_code"]),
        upstream_handler=Handler(row["upstream_handler"]),
        upstream_task_active=_flag(row["upstream_task_active"]),
        upstream_pipeline_id=int(row["upstream_pipeline_id"]),
        upstream_pipeline_code=str(row["upstream_pipeline_code"]),
        upstream_pipeline_active=_flag(row["upstream_pipeline_active"]),
    )


def _pipeline_dependency(row: Row) -> PipelineDependencyRow:
    return PipelineDependencyRow(
        dependency_id=int(row["dependency_id"]),
        pipeline_id=int(row["pipeline_id"]),
        upstream_pipeline_id=int(row["upstream_pipeline_id"]),
        type=DependencyType(row["dependency_type"]),
        upstream_pipeline_code=str(row["upstream_pipeline_code"]),
        upstream_pipeline_active=_flag(row["upstream_pipeline_active"]),
        upstream_project_code=row["upstream_project_code"],
    )


def _business_rule(row: Row) -> BusinessRuleRow:
    return BusinessRuleRow(
        rule_id=int(row["rule_id"]),
        task_id=int(row["task_id"]),
        code=str(row["rule_code"]),
        rule_type=str(row["rule_type"]),
        target_table=str(row["target_table"]),
        key_columns=str(row["key_columns"]),
        rule_sql=str(row["rule_sql"]),
        wave=int(row["wave"]),
    )


def as_date(value: object) -> date:
    # SQLite keeps dates as ISO text; PostgreSQL returns a date.
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def _instant(value: object) -> datetime:
    instant = as_utc(value if isinstance(value, datetime | str) else str(value))
    assert instant is not None
    return instant


def active_project_id(conn: EngineReads, project_code: str) -> int | None:
    """The id of the active project with this code; None when the Engine DB has none."""
    row = conn.one("metadata_project", project_code=project_code)
    return None if row is None else int(row["project_id"])


def read_pipelines(conn: EngineReads, project_id: int) -> tuple[PipelineRow, ...]:
    """Every pipeline of the project, active or not, by code."""
    return _rows(conn, "metadata_pipelines", project_id, _pipeline)


def project_parameter_values(
    conn: EngineReads, project_code: str
) -> tuple[tuple[str, str | None], ...]:
    """Every (name, value) of the project's task and pipeline parameters."""
    rows = conn.all("project_parameter_values", project_code=project_code)
    return tuple((str(row["name"]), row["value"]) for row in rows)
