"""etl-craft validate: every active pipeline's metadata checked; exit 1 on any FAIL."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.operations.validate.report import Finding, ValidateReport, validate


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        report = validate(ctx, args.pipeline_code)
    finally:
        ctx.close()
    emit(report, args.format, render(report))
    return 0 if report.valid else 1


def render(report: ValidateReport) -> str:
    lines = [_line(finding) for finding in report.findings]
    checked = ", ".join(report.pipelines) or "no active pipeline"
    verdict = "valid" if report.valid else "not valid"
    lines.append(
        f"{report.failures} failed, {report.warnings} warning(s) in project {report.project} "
        f"({checked}): the metadata is {verdict}"
    )
    return "\n".join(lines)


def _line(finding: Finding) -> str:
    where = ".".join(part for part in (finding.pipeline_code, finding.task_code) if part)
    if finding.parameter:
        where += f" {finding.parameter}"
    if finding.spec:
        where = f"{finding.spec} ({where})"
    return (
        f"{finding.severity.value} {finding.check} {where}: {finding.message}; "
        f"remedy: {finding.remedy}"
    )
