"""The findings that keep a pipeline from running: validate's checks whose failure means its
graph or its run settings cannot be built.

A pipeline with such a finding is reported (list, explain, doctor, the API, a metric), refused
by ``run`` before any run exists, and never admitted by the server; the other pipelines of the
project run as usual. The findings come from validate's own checks, so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from etl_craft.core.errors import MetadataError
from etl_craft.enginedb.connection import EngineReads
from etl_craft.enginedb.metadata import (
    ProjectMetadata,
    read_active_project_codes,
    read_project_metadata,
)
from etl_craft.operations.validate.findings import Finding, Severity, Subject
from etl_craft.operations.validate.graph import check_graph
from etl_craft.operations.validate.parameters import check_parameters

# A cycle or an inactive upstream leaves no graph; a bad run condition, cron or time zone, or
# a parameter value outside its declaration (an unknown ACTION, RETRIES='x') no run settings.
BLOCKING_CHECKS = frozenset(
    {"cycle", "inactive-dependency", "run-condition", "schedule", "timezone", "parameter-value"}
)
NO_FINDINGS: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class BlockedPipeline:
    project_code: str
    pipeline_id: int
    pipeline_code: str
    findings: tuple[Finding, ...]

    @property
    def reason(self) -> str:
        return refusal_text(self.pipeline_code, self.findings)


def blocking_findings(metadata: ProjectMetadata) -> dict[str, tuple[Finding, ...]]:
    """Each active pipeline of the project that cannot run, with the findings that say why."""
    scope = frozenset(p.pipeline_id for p in metadata.pipelines if p.active)
    # Graph and parameter checks read neither the project's files nor its SQL dialect.
    subject = Subject(metadata=metadata, scope=scope, project=None, dialect="duckdb")
    found: dict[str, list[Finding]] = {}
    for finding in [*check_graph(subject), *check_parameters(subject)]:
        if finding.severity is Severity.FAIL and finding.check in BLOCKING_CHECKS:
            found.setdefault(finding.pipeline_code, []).append(finding)
    return {code: tuple(findings) for code, findings in found.items()}


def project_blocking_findings(
    conn: EngineReads, project_code: str
) -> dict[str, tuple[Finding, ...]]:
    return blocking_findings(read_project_metadata(conn, project_code))


def blocked_pipelines(conn: EngineReads) -> tuple[BlockedPipeline, ...]:
    """The pipelines of every active project of the Engine DB that cannot run."""
    blocked: list[BlockedPipeline] = []
    for project_code in read_active_project_codes(conn):
        metadata = read_project_metadata(conn, project_code)
        for code, findings in sorted(blocking_findings(metadata).items()):
            pipeline_id = metadata.pipeline(code).pipeline_id
            blocked.append(BlockedPipeline(project_code, pipeline_id, code, findings))
    return tuple(blocked)


def describe(finding: Finding) -> str:
    where = f"task {finding.task_code}" if finding.task_code else "the pipeline"
    return f"{finding.check} ({where}): {finding.message}; {finding.remedy}"


def refusal_text(pipeline_code: str, findings: Iterable[Finding]) -> str:
    listed = "; ".join(describe(finding) for finding in findings)
    return (
        f"pipeline {pipeline_code} cannot run, its metadata has blocking findings: {listed}. "
        f"Fix them in a new migration (etl-craft validate --pipeline {pipeline_code} lists "
        "every finding); the other pipelines are not affected"
    )


def refusal(pipeline_code: str, findings: Iterable[Finding]) -> MetadataError:
    return MetadataError(f"{refusal_text(pipeline_code, findings)}; no run was created")


def refuse_blocked(conn: EngineReads, project_code: str, pipeline_code: str) -> None:
    """Raise MetadataError naming every blocking finding of the pipeline, if it has any."""
    findings = project_blocking_findings(conn, project_code).get(pipeline_code)
    if findings:
        raise refusal(pipeline_code, findings)
