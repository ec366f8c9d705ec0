"""migrate's judgement of each project file: every pipeline the file changes passes validate.

The file's own transaction is read before and after it runs; a pipeline whose rows differ
is validated as ``etl-craft validate`` would, and any FAIL rolls the whole file back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from etl_craft.core.errors import MetadataError, NotFoundError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.metadata import ProjectMetadata, read_project_metadata
from etl_craft.enginedb.migrations import MigrationFile
from etl_craft.operations.context import OperationContext
from etl_craft.operations.validate.report import (
    Finding,
    Severity,
    ValidateReport,
    subject_of,
    validate_metadata,
)


class MigrationValidation:
    """A migrate file check (enginedb.migrations.FileCheck) built on validate."""

    def __init__(self, ctx: OperationContext) -> None:
        self.ctx = ctx

    def __call__(self, conn: EngineConnection) -> Callable[[MigrationFile], None]:
        before = project_metadata_or_none(conn, self.ctx.project_code)

        def judge(migration: MigrationFile) -> None:
            after = read_project_metadata(conn, self.ctx.project_code)
            report = validate_changed(self.ctx, before, after)
            failures = [] if report is None else failures_of(report)
            if failures:
                raise MetadataError(_refusal(migration, failures))

        return judge


def validate_changed(
    ctx: OperationContext, before: ProjectMetadata | None, after: ProjectMetadata
) -> ValidateReport | None:
    """validate's report on the pipelines whose rows differ between ``before`` and ``after``;
    None when no pipeline differs."""
    shapes = _pipelines(before)
    touched = frozenset(
        pipeline_id
        for pipeline_id, rows in _pipelines(after).items()
        if shapes.get(pipeline_id) != rows
    )
    if not touched:
        return None
    return validate_metadata(subject_of(ctx, after, touched))


def failures_of(report: ValidateReport) -> list[Finding]:
    return [f for f in report.findings if f.severity is Severity.FAIL]


def project_metadata_or_none(conn: EngineConnection, project_code: str) -> ProjectMetadata | None:
    try:
        return read_project_metadata(conn, project_code)
    except NotFoundError:
        return None  # the file may be the one that creates the project's first rows


def _pipelines(metadata: ProjectMetadata | None) -> dict[int, tuple[Any, ...]]:
    """Every row that shapes a pipeline, by pipeline: two equal tuples mean it is unchanged."""
    if metadata is None:
        return {}
    shapes: dict[int, tuple[Any, ...]] = {}
    for pipeline in metadata.pipelines:
        tasks = metadata.tasks_of(pipeline.pipeline_id, active_only=False)
        task_ids = {task.task_id for task in tasks}
        shapes[pipeline.pipeline_id] = (
            pipeline,
            tuple((task, sorted(task.parameters.items())) for task in tasks),
            tuple(p for p in metadata.pipeline_parameters if p.pipeline_id == pipeline.pipeline_id),
            tuple(d for d in metadata.task_dependencies if d.task_id in task_ids),
            metadata.pipeline_dependencies_of(pipeline.pipeline_id),
            tuple(r for r in metadata.business_rules if r.task_id in task_ids),
        )
    return shapes


def refusal_lines(failures: list[Finding]) -> str:
    """validate's failures, one indented line each: where, check, message and remedy."""
    return "\n".join(
        f"  pipeline {f.pipeline_code}"
        + (f", task {f.task_code}" if f.task_code else "")
        + (f", parameter {f.parameter}" if f.parameter else "")
        + f": {f.check}: {f.message}; {f.remedy}"
        for f in failures
    )


def _refusal(migration: MigrationFile, failures: list[Finding]) -> str:
    return (
        f"migration {migration.name} was rolled back: validate finds {len(failures)} "
        f"failure(s) in the pipelines it changes:\n{refusal_lines(failures)}\nfix the file and "
        "run etl-craft migrate again (files applied before it stay applied), or apply it as it "
        "is with etl-craft migrate --no-validate, which is recorded"
    )
