"""etl-craft list: the project's active pipelines with schedule, next run, last run and pause."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.operations.inspect import PipelineList, PipelineSummary, list_pipelines


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        report = list_pipelines(ctx)
    finally:
        ctx.close()
    emit(report, args.format, render(report))
    return 0


def render(report: PipelineList) -> str:
    if not report.pipelines:
        return f"project {report.project} has no active pipeline"
    header = ("PIPELINE", "SCHEDULE", "TIME ZONE", "NEXT RUN (UTC)", "LAST RUN", "STATE")
    rows = [header, *(_row(summary) for summary in report.pipelines)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _row(summary: PipelineSummary) -> tuple[str, str, str, str, str, str]:
    if summary.schedule_problem:
        next_run = "invalid schedule (see etl-craft validate)"
    elif summary.next_run is not None:
        next_run = summary.next_run.strftime("%Y-%m-%d %H:%M")
    else:
        next_run = "-"
    last = summary.last_run
    last_text = "never" if last is None else f"{last.status.value} (run {last.pipeline_run_id})"
    state = f"paused: {summary.pause_reason}" if summary.paused else "active"
    if summary.blocking_findings:
        checks = ", ".join(sorted({finding.check for finding in summary.blocking_findings}))
        state = f"blocked ({checks}; see etl-craft validate)"
    return (
        summary.pipeline_code,
        summary.schedule or "manual",
        summary.timezone,
        next_run,
        last_text,
        state,
    )
