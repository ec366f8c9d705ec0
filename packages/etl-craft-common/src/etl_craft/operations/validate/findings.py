"""What validate's checks share: the metadata they judge and the findings they report."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from etl_craft.config.project import Project
from etl_craft.config.sections import Warehouse
from etl_craft.enginedb.metadata import PipelineEdge, PipelineRow, ProjectMetadata, TaskRow


class Severity(StrEnum):
    FAIL = "FAIL"
    WARN = "WARN"


@dataclass(frozen=True)
class Finding:
    severity: Severity
    check: str
    pipeline_code: str
    task_code: str | None
    parameter: str | None
    message: str  # names the value found and what was expected
    remedy: str
    # Where a pipeline spec writes what the finding is about: pipelines/orders.yml:14
    # tasks.load.action; None for a pipeline written as migrations alone.
    spec: str | None = None


@dataclass(frozen=True)
class Subject:
    """The metadata of a whole project, and which of its pipelines the report is about.

    Checks that span pipelines (cycles, one table format per target) look at every active
    pipeline and report what touches a pipeline in scope; the others look only at the scope.
    """

    metadata: ProjectMetadata
    scope: frozenset[int]
    project: Project | None
    dialect: str  # the warehouse's sqlglot dialect
    remote: bool = False  # Orchestration mode: remote, where an external orchestrator decides
    # The warehouse to look tables and columns up in; None leaves them unchecked.
    warehouse: Warehouse | None = None
    # Every project's pipeline dependencies, for cycles through other projects; () skips them.
    pipeline_edges: tuple[PipelineEdge, ...] = ()

    def pipelines(self) -> tuple[PipelineRow, ...]:
        return tuple(p for p in self.metadata.pipelines if p.active and p.pipeline_id in self.scope)

    def tasks(self) -> tuple[TaskRow, ...]:
        return tuple(
            task for p in self.pipelines() for task in self.metadata.tasks_of(p.pipeline_id)
        )

    def all_active_tasks(self) -> tuple[TaskRow, ...]:
        active = {p.pipeline_id for p in self.metadata.pipelines if p.active}
        return tuple(t for t in self.metadata.tasks if t.active and t.pipeline_id in active)

    def in_scope(self, pipeline_id: int) -> bool:
        return pipeline_id in self.scope

    def finding(
        self,
        severity: Severity,
        check: str,
        where: TaskRow | PipelineRow,
        message: str,
        remedy: str,
        parameter: str | None = None,
    ) -> Finding:
        if isinstance(where, TaskRow):
            pipeline = self.metadata.pipeline_by_id(where.pipeline_id).code
            return Finding(severity, check, pipeline, where.code, parameter, message, remedy)
        return Finding(severity, check, where.code, None, parameter, message, remedy)

    def fail(
        self,
        check: str,
        where: TaskRow | PipelineRow,
        message: str,
        remedy: str,
        parameter: str | None = None,
    ) -> Finding:
        return self.finding(Severity.FAIL, check, where, message, remedy, parameter)

    def warn(
        self,
        check: str,
        where: TaskRow | PipelineRow,
        message: str,
        remedy: str,
        parameter: str | None = None,
    ) -> Finding:
        return self.finding(Severity.WARN, check, where, message, remedy, parameter)
