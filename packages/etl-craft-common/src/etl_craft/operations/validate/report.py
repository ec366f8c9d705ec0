"""validate: every active pipeline's metadata checked without running anything.

Every problem is reported, not only the first; a FAIL means a run would fail or do the wrong
thing, a WARN that something is likely a mistake. The document's JSON Schema ships beside
this module, in schemas/validate.schema.json.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from etl_craft.config.rules import WarehouseType
from etl_craft.enginedb.metadata import ProjectMetadata, read_pipeline_edges, read_project_metadata
from etl_craft.operations.context import OperationContext
from etl_craft.operations.project_files import project_files
from etl_craft.operations.remote.rules import check_remote, is_remote
from etl_craft.operations.specs.findings import placed
from etl_craft.operations.validate.findings import Finding, Severity, Subject
from etl_craft.operations.validate.graph import check_graph
from etl_craft.operations.validate.lineage import check_lineage
from etl_craft.operations.validate.parameters import check_parameters
from etl_craft.operations.validate.reads import check_reads
from etl_craft.operations.validate.sources import check_sources
from etl_craft.specs.loader import load_specs
from etl_craft.specs.model import PipelineSpec, SpecError
from etl_craft.warehouse import SQL_DIALECTS

__all__ = ["Finding", "Severity", "ValidateReport", "subject_of", "validate", "validate_metadata"]

CHECKS = (
    check_graph,
    check_parameters,
    check_sources,
    check_lineage,
    check_reads,
    check_remote,
)


@dataclass(frozen=True)
class ValidateReport:
    schema: ClassVar[str] = "etl-craft/validate/1"
    project: str
    pipelines: tuple[str, ...]
    valid: bool
    failures: int
    warnings: int
    findings: tuple[Finding, ...]

    @classmethod
    def of(
        cls, project: str, pipelines: tuple[str, ...], findings: list[Finding]
    ) -> ValidateReport:
        failures = sum(1 for f in findings if f.severity is Severity.FAIL)
        return cls(
            project=project,
            pipelines=pipelines,
            valid=failures == 0,
            failures=failures,
            warnings=len(findings) - failures,
            findings=tuple(findings),
        )


def validate(ctx: OperationContext, pipeline_code: str | None = None) -> ValidateReport:
    with ctx.engine.read() as conn:
        metadata = read_project_metadata(conn, ctx.project_code)
        edges = read_pipeline_edges(conn)
    scope = _scope(metadata, pipeline_code)
    subject = replace(subject_of(ctx, metadata, scope, with_warehouse=True), pipeline_edges=edges)
    report = validate_metadata(subject)
    return replace(report, findings=placed(_specs(ctx), report.findings))


def _specs(ctx: OperationContext) -> tuple[PipelineSpec, ...]:
    """The project's pipeline specs, to place findings in; none when one does not load (plan
    reports that spec's own problem)."""
    if ctx.project is None:
        return ()
    try:
        return load_specs(ctx.project.pipelines_dir)
    except SpecError:
        return ()


def subject_of(
    ctx: OperationContext,
    metadata: ProjectMetadata,
    scope: frozenset[int],
    *,
    with_warehouse: bool = False,
) -> Subject:
    """The project's metadata as validate judges it: with the project's files and dialect
    (DuckDB, the embedded default, when there is no project). ``with_warehouse`` looks the
    tables and columns SELECTs read up in the warehouse: validate does, while migrate does not
    hold metadata back for source tables that are loaded after it."""
    warehouse = ctx.connector.warehouse.type if ctx.connector else WarehouseType.DUCKDB
    # Another project's files are its bundle's; its warehouse is not this configuration's.
    own = ctx.acts_on_own_project
    return Subject(
        metadata=metadata,
        scope=scope,
        project=project_files(ctx),
        dialect=SQL_DIALECTS[warehouse],
        remote=is_remote(ctx),
        warehouse=ctx.connector.warehouse if with_warehouse and ctx.connector and own else None,
    )


def validate_metadata(subject: Subject) -> ValidateReport:
    findings = [finding for check in CHECKS for finding in check(subject)]
    findings.sort(key=lambda f: (f.pipeline_code, f.task_code or "", f.severity, f.check))
    pipelines = tuple(p.code for p in subject.pipelines())
    return ValidateReport.of(subject.metadata.project_code, pipelines, findings)


def _scope(metadata: ProjectMetadata, pipeline_code: str | None) -> frozenset[int]:
    if pipeline_code is not None:
        return frozenset({metadata.pipeline(pipeline_code).pipeline_id})
    return frozenset(p.pipeline_id for p in metadata.pipelines if p.active)
