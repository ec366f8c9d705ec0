"""etl-craft graph --pipeline P: the pipeline's tasks with their upstream edges."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.operations.inspect import GraphTask, PipelineGraph, UpstreamView, pipeline_graph


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        report = pipeline_graph(ctx, args.pipeline_code)
    finally:
        ctx.close()
    emit(report, args.format, render(report))
    return 0


def render(report: PipelineGraph) -> str:
    lines = [f"pipeline {report.pipeline_code} (project {report.project})"]
    for pipeline in report.depends_on_pipelines:
        inactive = ", inactive" if not pipeline.active else ""
        lines.append(f"  after pipeline {pipeline.pipeline_code} [{pipeline.type.value}{inactive}]")
    lines.extend(_task(task) for task in report.tasks)
    return "\n".join(lines)


def _task(task: GraphTask) -> str:
    condition = task.run_condition.value
    if task.required_count is not None:
        condition += f" {task.required_count}"
    head = f"  {task.task_code} ({task.handler.value}, {condition})"
    if not task.upstream:
        return head
    return f"{head} <- {', '.join(_edge(edge) for edge in task.upstream)}"


def _edge(edge: UpstreamView) -> str:
    name = f"{edge.pipeline_code}.{edge.task_code}" if edge.cross_pipeline else edge.task_code
    notes = [edge.type.value]
    if edge.cross_pipeline:
        notes.append("other pipeline")
    if not edge.active:
        notes.append("inactive")
    return f"{name} [{', '.join(notes)}]"
