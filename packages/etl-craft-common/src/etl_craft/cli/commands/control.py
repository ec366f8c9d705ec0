"""etl-craft mark, cancel, pause, resume, reopen and audit, and run --rerun / --skip."""

from __future__ import annotations

import argparse
import json
from datetime import date

from etl_craft.cli.commands import run as run_command
from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.cli.registry import Command
from etl_craft.core.errors import UsageError
from etl_craft.operations.audit import Audit, audit
from etl_craft.operations.interventions import Intervention, MarkRequest, cancel, mark, reopen
from etl_craft.operations.pauses import Pause, PauseRequest, pause, resume
from etl_craft.operations.reruns import Rerun, RerunRequest, rerun, skip

STATUSES = ("SUCCESS", "FAILED", "SKIPPED")


def _pipeline(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    parser.add_argument(
        "--pipeline_code", "--pipeline-code", dest="pipeline_code", required=required
    )


def _run_id(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    parser.add_argument("--run-id", type=int, required=required, help="the run to act on, by id")


def _reason(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reason", help="why: recorded with the intervention and its actor")


def _task(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task_code", "--task-code", dest="task_code")


def configure_mark(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    _run_id(parser)
    _task(parser)
    parser.add_argument("--status", required=True, choices=STATUSES)
    parser.add_argument("--rows", type=int, help="rows written, recorded on the task run")
    _reason(parser)


def handle_mark(args: argparse.Namespace) -> int:
    if args.rows is not None and args.task_code is None:
        raise UsageError("--rows applies to a task; add --task_code, or leave --rows out")
    request = MarkRequest(
        args.pipeline_code, args.status, args.reason, args.run_id, args.task_code, args.rows
    )
    ctx = operation_context(args)
    try:
        done = mark(ctx, request)
    finally:
        ctx.close()
    return _intervened(done, args.format)


def configure_cancel(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    _run_id(parser)
    _reason(parser)


def handle_cancel(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        done = cancel(ctx, args.pipeline_code, args.run_id, args.reason)
    finally:
        ctx.close()
    return _intervened(done, args.format)


def configure_reopen(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    _run_id(parser, required=True)
    _reason(parser)


def handle_reopen(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        done = reopen(ctx, args.pipeline_code, args.run_id, args.reason)
    finally:
        ctx.close()
    return _intervened(done, args.format)


def configure_pause(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group(required=True)
    scope.add_argument("--pipeline_code", "--pipeline-code", dest="pipeline_code")
    scope.add_argument("--project", action="store_true", help="every pipeline of the project")
    _reason(parser)


def handle_pause(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        done = pause(ctx, _pause_request(args))
    finally:
        ctx.close()
    emit(done, args.format, render_pause(done))
    return 0


def handle_resume(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        done = resume(ctx, _pause_request(args))
    finally:
        ctx.close()
    emit(done, args.format, render_pause(done))
    return 0


def _pause_request(args: argparse.Namespace) -> PauseRequest:
    return PauseRequest(None if args.project else args.pipeline_code, args.reason)


def configure_audit(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser, required=False)
    parser.add_argument("--since", type=date.fromisoformat, help="YYYY-MM-DD (UTC)")
    parser.add_argument("--limit", type=int, default=500, help="rows of each kind at most")


def handle_audit(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        found = audit(ctx, args.pipeline_code, args.since, args.limit)
    finally:
        ctx.close()
    emit(found, args.format, render_audit(found))
    return 0


def configure_run(parser: argparse.ArgumentParser) -> None:
    run_command.configure_run(parser)
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--rerun", action="store_true", help="run a recorded task again")
    what.add_argument("--skip", action="store_true", help="record a task as SKIPPED")
    parser.add_argument(
        "--with-downstream",
        action="store_true",
        help="with --rerun: also rerun every downstream task that ran",
    )
    _reason(parser)


def handle_run(args: argparse.Namespace) -> int:
    if not (args.rerun or args.skip):
        if args.with_downstream:
            raise UsageError("--with-downstream goes with --rerun; add --rerun or leave it out")
        return run_command.handle_run(args)
    flag = "--rerun" if args.rerun else "--skip"
    if len(args.task_codes) != 1:
        raise UsageError(
            f"{flag} acts on one task; found {len(args.task_codes)} --task_code: name one"
        )
    if args.with_downstream and not args.rerun:
        raise UsageError("--with-downstream goes with --rerun, not --skip")
    (task_code,) = args.task_codes
    ctx = operation_context(args)
    try:
        if args.skip:
            skipped = skip(ctx, args.pipeline_code, task_code, args.run_id, args.reason)
            return _intervened(skipped, args.format)
        request = RerunRequest(
            args.pipeline_code, task_code, args.reason, args.run_id, args.with_downstream
        )
        done = rerun(ctx, request)
    finally:
        ctx.close()
    emit(done, args.format, render_rerun(done))
    return run_command.run_exit_code(done.run.status)


def _intervened(done: Intervention, fmt: str) -> int:
    emit(done, fmt, f"{done.message}\n{run_command.render_run(done.run)}")
    return 0


def render_rerun(done: Rerun) -> str:
    return f"{done.message}\n{run_command.render_run(done.run)}"


def render_pause(done: Pause) -> str:
    if done.command == "pause":
        said = f"paused {done.scope} of project {done.project_code}: {done.reason}"
        if done.live_runs:
            runs = ", ".join(str(run) for run in done.live_runs)
            said += (
                f"\nrun(s) {runs} in progress start nothing new; their running tasks finish "
                "and etl-craft run continues them after etl-craft resume"
            )
        return said
    said = f"resumed {done.scope} of project {done.project_code} (paused by {done.paused_by})"
    if done.live_runs:
        runs = ", ".join(str(run) for run in done.live_runs)
        said += f"\nrun(s) {runs} are in progress: etl-craft run continues them"
    return said


def render_audit(found: Audit) -> str:
    lines = [f"actions ({len(found.actions)}):"]
    for action in found.actions:
        target = " ".join(
            part
            for part in (
                action.pipeline_code,
                f"run {action.run_id}" if action.run_id else None,
                f"task {action.task_code}" if action.task_code else None,
            )
            if part
        )
        reason = action.arguments.get("reason")
        lines.append(
            f"  {action.at:%Y-%m-%d %H:%M:%S}  {action.actor:<20} {action.command:<8} "
            f"{action.outcome:<9} {target}" + (f"  reason: {reason}" if reason else "")
        )
    lines.append(f"metadata changes ({len(found.metadata_changes)}):")
    for change in found.metadata_changes:
        source = f"  migration {change.migration}" if change.migration else ""
        after = json.dumps(change.after, sort_keys=True) if change.after else ""
        lines.append(
            f"  {change.at:%Y-%m-%d %H:%M:%S}  {change.actor:<20} {change.operation:<6} "
            f"{change.table_name} {change.row_key}{source}  {after[:120]}"
        )
    return "\n".join(lines)


RUN = Command(
    "run",
    "run a pipeline in the foreground until its run ends; --rerun or --skip one task",
    configure_run,
    handle_run,
)
MARK = Command("mark", "set a task's or a run's status, with a reason", configure_mark, handle_mark)
CANCEL = Command(
    "cancel",
    "cancel a run: queued tasks at once, running ones by their owner",
    configure_cancel,
    handle_cancel,
)
PAUSE = Command(
    "pause", "stop new task starts of a pipeline or project", configure_pause, handle_pause
)
RESUME = Command("resume", "lift a pause", configure_pause, handle_resume)
REOPEN = Command(
    "reopen", "reopen an ended run so etl-craft run continues it", configure_reopen, handle_reopen
)
AUDIT = Command(
    "audit", "list recorded commands and metadata changes", configure_audit, handle_audit
)
