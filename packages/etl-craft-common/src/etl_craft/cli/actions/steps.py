"""etl-craft steps --pipeline P: the pipeline's tasks by wave, for display only."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.operations.inspect import PipelineSteps, pipeline_steps


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        report = pipeline_steps(ctx, args.pipeline_code)
    finally:
        ctx.close()
    emit(report, args.format, render(report))
    return 0


def render(report: PipelineSteps) -> str:
    lines = [f"pipeline {report.pipeline_code} (project {report.project}), by wave"]
    for wave in report.waves:
        lines.append(f"  wave {wave.number}")
        for step in wave.tasks:
            action = f" {step.action}" if step.action else ""
            lines.append(f"    {step.task_code} ({step.handler.value}{action})")
    lines.append("waves are for display: a task starts as soon as its own condition is met")
    return "\n".join(lines)
