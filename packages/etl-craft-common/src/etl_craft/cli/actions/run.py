"""Running pipelines (the plain run, extended by control.RUN) and reconcile."""

from __future__ import annotations

import argparse

from etl_craft.cli.actions.status import render_run, run_exit_code
from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.cli.progress import live_progress
from etl_craft.core.enums import TaskRunStatus
from etl_craft.core.errors import ExitCode, UsageError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.remote.mode import RemoteRequest, run_task
from etl_craft.operations.remote.rules import is_remote
from etl_craft.operations.runs.foreground import RunRequest, reconcile_requested
from etl_craft.operations.runs.requests import PausedPipeline, request_run
from etl_craft.runtime.tracing import configure_tracing


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
        # run --task answers for its tasks; the run itself goes on.
        chosen = [task for task in view.tasks if task.task_code in args.task_codes]
        settled = {TaskRunStatus.SUCCESS, TaskRunStatus.SKIPPED}
        return 0 if all(task.status in settled for task in chosen) else int(ExitCode.FAILURE)
    return run_exit_code(view.status)


def _remote_tasks(ctx: OperationContext, args: argparse.Namespace) -> int:
    """Remote mode: each named task runs now, as the orchestrator decided (no gate, no wait)."""
    if args.run_id is not None:
        raise UsageError("in remote mode a task names its run by --run-key, not --run")
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
