"""A run's status and a pipeline's history: reads only, so they import no run machinery."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.core.enums import RunStatus
from etl_craft.core.errors import ExitCode
from etl_craft.operations.runs.history import History, history, run_status
from etl_craft.operations.runs.views import RunView


def handle_status(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        view = run_status(ctx, args.pipeline_code, args.run_id, or_latest=True)
    finally:
        ctx.close()
    emit(view, args.format, render_run(view))
    return 0


def handle_history(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        found = history(ctx, args.pipeline_code, args.limit)
    finally:
        ctx.close()
    emit(found, args.format, render_history(found))
    return 0


def render_run(view: RunView) -> str:
    ended = view.ended_at.isoformat(timespec="seconds") if view.ended_at else "-"
    lines = [
        f"run {view.run_id} of {view.pipeline_code} ({view.run_key}, run date {view.run_date}): "
        f"{view.status}",
        f"  started {view.started_at.isoformat(timespec='seconds') if view.started_at else '-'}, "
        f"ended {ended}",
    ]
    width = max((len(task.task_code) for task in view.tasks), default=4)
    for task in view.tasks:
        status = task.status.value if task.status else "NOT RUN"
        rows = "" if task.rows_written is None else f" rows={task.rows_written}"
        detail = task.error or task.message or ""
        lines.append(
            f"  {task.task_code:<{width}}  {status:<11} attempts={task.attempts}{rows}"
            + (f"  {detail.splitlines()[0]}" if detail else "")
        )
    return "\n".join(lines)


def render_history(found: History) -> str:
    if not found.runs:
        return f"pipeline {found.pipeline_code} has no runs yet"
    header = f"{'RUN':>6}  {'STATUS':<11} {'RUN DATE':<10}  {'TRIGGER':<8} RUN KEY  BY"
    return "\n".join(
        [header]
        + [
            f"{run.run_id:>6}  {run.status.value:<11} {run.run_date!s:<10}  "
            f"{run.trigger_kind:<8} {run.run_key}  by {run.started_by}"
            for run in found.runs
        ]
    )


def run_exit_code(status: RunStatus) -> int:
    if status is RunStatus.SUCCESS or status is RunStatus.SKIPPED:
        return 0
    if status in (RunStatus.QUEUED, RunStatus.IN_PROGRESS):
        return int(ExitCode.INCOMPLETE)
    return int(ExitCode.FAILURE)
