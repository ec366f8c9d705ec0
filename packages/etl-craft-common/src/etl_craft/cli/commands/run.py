"""Running pipelines (the plain run, extended by control.RUN), status, history and reconcile."""

from __future__ import annotations

import argparse
from datetime import date

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.cli.progress import live_progress
from etl_craft.cli.registry import Command
from etl_craft.core.enums import RunStatus, TaskRunStatus
from etl_craft.core.errors import ExitCode, UsageError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.history import History, history, run_status
from etl_craft.operations.remote import RemoteRequest, run_task
from etl_craft.operations.remote_rules import is_remote
from etl_craft.operations.run_requests import PausedPipeline, request_run
from etl_craft.operations.run_views import RunView
from etl_craft.operations.runs import RunRequest, reconcile_requested
from etl_craft.runtime.tracing import configure_tracing


def _pipeline(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pipeline_code", "--pipeline-code", dest="pipeline_code", required=True)


def _run_selection(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    parser.add_argument("--run-id", type=int, help="the run to act on, by id")


def configure_run(parser: argparse.ArgumentParser) -> None:
    _run_selection(parser)
    parser.add_argument("--run-key", help="the run to act on (created when none has this key)")
    parser.add_argument("--run-date", type=date.fromisoformat, help="YYYY-MM-DD for a new run")
    parser.add_argument(
        "--task_code",
        "--task-code",
        dest="task_codes",
        action="append",
        default=[],
        help="run only this task (repeatable); exits WAITING when its dependencies are not met",
    )


def handle_run(args: argparse.Namespace) -> int:
    configure_tracing("etl-craft", inherit=True)
    ctx = operation_context(args)
    if args.task_codes and is_remote(ctx):
        return _remote_tasks(ctx, args)
    try:
        found = request_run(
            ctx,
            RunRequest(
                args.pipeline_code,
                args.run_id,
                args.run_key,
                args.run_date,
                tuple(args.task_codes),
            ),
            live_progress(ctx, args.format),
        )
    finally:
        ctx.close()
    if isinstance(found, PausedPipeline):
        emit(found, args.format, found.message)
        return 0  # Appendix B: a paused pipeline that started nothing is no failure
    view = found
    emit(view, args.format, render_run(view))
    if args.task_codes:
        # run --task_code answers for its tasks; the run itself goes on.
        chosen = [task for task in view.tasks if task.task_code in args.task_codes]
        settled = {TaskRunStatus.SUCCESS, TaskRunStatus.SKIPPED}
        return 0 if all(task.status in settled for task in chosen) else int(ExitCode.FAILURE)
    return run_exit_code(view.status)


def _remote_tasks(ctx: OperationContext, args: argparse.Namespace) -> int:
    """Remote mode: each named task runs now, as the orchestrator decided (no gate, no wait)."""
    if args.run_id is not None:
        raise UsageError("in remote mode a task names its run by --run-key, not --run-id")
    try:
        views = [
            run_task(ctx, RemoteRequest(args.pipeline_code, args.run_key, args.run_date, code))
            for code in args.task_codes
        ]
    finally:
        ctx.close()
    view = views[-1]
    emit(view, args.format, render_run(view))
    chosen = [task for task in view.tasks if task.task_code in args.task_codes]
    settled = {TaskRunStatus.SUCCESS, TaskRunStatus.SKIPPED}
    return 0 if all(task.status in settled for task in chosen) else int(ExitCode.FAILURE)


def handle_status(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        view = run_status(ctx, args.pipeline_code, args.run_id)
    finally:
        ctx.close()
    emit(view, args.format, render_run(view))
    return 0


def configure_history(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    parser.add_argument("--limit", type=int, default=20)


def handle_history(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        found = history(ctx, args.pipeline_code, args.limit)
    finally:
        ctx.close()
    emit(found, args.format, render_history(found))
    return 0


def handle_reconcile(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        report = reconcile_requested(ctx)
    finally:
        ctx.close()
    lines = [
        f"attempt {item.attempt_id}: {item.outcome}: {item.message}" for item in report.settled
    ]
    emit(
        {"schema": "etl-craft/reconcile/1", "settled": report.settled},
        args.format,
        "\n".join(lines) or "nothing to reconcile: no attempt's lease has expired",
    )
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


STATUS = Command("status", "show a run and its tasks", _run_selection, handle_status)
HISTORY = Command(
    "history", "list a pipeline's runs, newest first", configure_history, handle_history
)
RECONCILE = Command(
    "reconcile", "settle attempts whose owner stopped renewing its lease", None, handle_reconcile
)
