"""etl-craft mark, cancel, pause, resume, reopen, audit, rerun and backfill; run --skip,
--force and --ignore-dependencies."""

from __future__ import annotations

import argparse
import json

from etl_craft.cli.actions import run as run_command
from etl_craft.cli.actions.status import render_run, run_exit_code
from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.cli.progress import live_progress
from etl_craft.core.enums import TaskRunStatus
from etl_craft.core.errors import ExitCode, UsageError
from etl_craft.operations.audit import Audit, audit
from etl_craft.operations.interventions.actions import (
    Intervention,
    MarkRequest,
    cancel,
    mark,
    reopen,
)
from etl_craft.operations.interventions.pauses import Pause, PauseRequest, pause, resume
from etl_craft.operations.remote.mode import RemoteRequest, finalize_run, init_run
from etl_craft.operations.runs.backfills import Backfill, BackfillRequest, backfill
from etl_craft.operations.runs.forcing import ForceRequest, force, ignore_dependencies
from etl_craft.operations.runs.plans import RunActionPlan, backfill_plan, rerun_plan
from etl_craft.operations.runs.reruns import Rerun, RerunRequest, rerun, skip
from etl_craft.runtime.stopping import stop_on_signals


def handle_mark(args: argparse.Namespace) -> int:
    if args.rows is not None and args.task_code is None:
        raise UsageError("--rows applies to a task; add --task, or leave --rows out")
    request = MarkRequest(
        args.pipeline_code, args.status, args.reason, args.run_id, args.task_code, args.rows
    )
    ctx = operation_context(args)
    try:
        done = mark(ctx, request)
    finally:
        ctx.close()
    return _intervened(done, args.format)


def handle_cancel(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        done = cancel(ctx, args.pipeline_code, args.run_id, args.reason)
    finally:
        ctx.close()
    return _intervened(done, args.format)


def handle_reopen(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        done = reopen(ctx, args.pipeline_code, args.run_id, args.reason)
    finally:
        ctx.close()
    return _intervened(done, args.format)


def handle_pause(args: argparse.Namespace) -> int:
    _scope_project(args)
    ctx = operation_context(args)
    try:
        done = pause(ctx, _pause_request(args))
    finally:
        ctx.close()
    emit(done, args.format, render_pause(done))
    return 0


def handle_resume(args: argparse.Namespace) -> int:
    _scope_project(args)
    ctx = operation_context(args)
    try:
        done = resume(ctx, _pause_request(args))
    finally:
        ctx.close()
    emit(done, args.format, render_pause(done))
    return 0


def _scope_project(args: argparse.Namespace) -> None:
    """`pause --project P` names the project acted on, as the global --project P does."""
    named = args.whole_project
    if not named:  # None (--pipeline) or `--project` alone: the project acted on
        return
    if args.project is not None and args.project != named:
        raise UsageError(
            f"--project {args.project} before the command and --project {named} after it "
            "name two projects; name the project once"
        )
    args.project = named


def _pause_request(args: argparse.Namespace) -> PauseRequest:
    whole = args.whole_project is not None
    return PauseRequest(None if whole else args.pipeline_code, args.reason)


def handle_audit(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        found = audit(ctx, args.pipeline_code, args.since, args.limit)
    finally:
        ctx.close()
    emit(found, args.format, render_audit(found))
    return 0


def handle_rerun(args: argparse.Namespace) -> int:
    args.task_codes = [args.task_code]
    return handle_run(args)


def handle_backfill(args: argparse.Namespace) -> int:
    if args.date_from > args.date_to:
        raise UsageError(
            f"--from {args.date_from} is after --to {args.date_to}; give the earlier date first"
        )
    args.backfill = f"{args.date_from}:{args.date_to}"
    return handle_run(args)


def handle_run(args: argparse.Namespace) -> int:
    # Every way of running stops its task processes and releases its run on these signals.
    with stop_on_signals():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    if args.with_downstream and not args.rerun:
        raise UsageError("--with-downstream goes with rerun: use etl-craft rerun, or leave it out")
    if args.plan:
        return _planned(args)
    if args.backfill is not None:
        return _backfill(args)
    if args.init_only or args.finalize_only:
        return _orchestrator_step(args)
    if args.force or args.ignore_dependencies:
        return _forced(args)
    if not (args.rerun or args.skip):
        return run_command.handle_run(args)
    flag = "rerun" if args.rerun else "--skip"
    if len(args.task_codes) != 1:
        raise UsageError(f"{flag} acts on one task; found {len(args.task_codes)} --task: name one")
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
    return run_exit_code(done.run.status)


def _planned(args: argparse.Namespace) -> int:
    if not (args.rerun or args.backfill):
        raise UsageError(
            "--plan shows what rerun or backfill would do: use etl-craft rerun --plan or etl-craft "
            "backfill --plan"
        )
    if args.rerun and len(args.task_codes) != 1:
        raise UsageError(f"rerun acts on one task; found {len(args.task_codes)} --task: name one")
    ctx = operation_context(args)
    try:
        if args.backfill:
            plan = backfill_plan(ctx, args.pipeline_code, args.backfill)
        else:
            request = RerunRequest(
                args.pipeline_code,
                args.task_codes[0],
                args.reason,
                args.run_id,
                args.with_downstream,
            )
            plan = rerun_plan(ctx, request)
    finally:
        ctx.close()
    emit(plan, args.format, render_run_plan(plan))
    return 0


def render_run_plan(plan: RunActionPlan) -> str:
    lines = [plan.message]
    if plan.dates:
        lines.append(f"dates: {plan.dates[0]} to {plan.dates[-1]}")
    for task in plan.tasks:
        now = f"task run {task.task_run_id} ({task.status})" if task.task_run_id else "new"
        lines.append(f"  {task.task_code}: {now}, writes {task.target or 'no table'}")
        lines += [f"      {column}" for column in task.columns]
    return "\n".join(lines)


def _orchestrator_step(args: argparse.Namespace) -> int:
    option = "--init-only" if args.init_only else "--finalize-only"
    if args.task_codes or args.run_id is not None:
        raise UsageError(
            f"{option} acts on the orchestrator's whole run, named by --run-key; leave out "
            "--task and --run"
        )
    request = RemoteRequest(args.pipeline_code, args.run_key, args.run_date)
    ctx = operation_context(args)
    try:
        view = init_run(ctx, request) if args.init_only else finalize_run(ctx, request)
    finally:
        ctx.close()
    emit(view, args.format, render_run(view))
    return 0 if args.init_only else run_exit_code(view.status)


def _backfill(args: argparse.Namespace) -> int:
    chosen = [
        flag
        for flag, value in (
            ("--run", args.run_id),
            ("--run-key", args.run_key),
            ("--run-date", args.run_date),
            ("--task", args.task_codes or None),
        )
        if value is not None
    ]
    if chosen:
        raise UsageError(
            f"backfill makes its own runs, one per date; found {', '.join(chosen)}: leave them out"
        )
    ctx = operation_context(args)
    try:
        request = BackfillRequest(args.pipeline_code, args.backfill, args.reason)
        done = backfill(ctx, request, live_progress(ctx, args.format))
    finally:
        ctx.close()
    emit(done, args.format, render_backfill(done))
    return 0 if done.complete else int(ExitCode.INCOMPLETE)


def _forced(args: argparse.Namespace) -> int:
    if args.force and len(args.task_codes) != 1:
        raise UsageError(f"--force runs one task; found {len(args.task_codes)} --task: name one")
    if args.ignore_dependencies and args.task_codes:
        raise UsageError(
            "--ignore-dependencies runs the whole pipeline; to run one task past its "
            "dependencies use --force --task T"
        )
    request = ForceRequest(
        args.pipeline_code,
        args.reason,
        args.task_codes[0] if args.force else None,
        args.run_id,
        args.run_key,
        args.run_date,
    )
    ctx = operation_context(args)
    try:
        done = force(ctx, request) if args.force else ignore_dependencies(ctx, request)
    finally:
        ctx.close()
    emit(done, args.format, f"{done.message}\n{render_run(done.run)}")
    if not args.force:
        return run_exit_code(done.run.status)
    forced = [task for task in done.run.tasks if task.task_code == request.task_code]
    settled = (TaskRunStatus.SUCCESS, TaskRunStatus.SKIPPED)
    return 0 if forced and forced[0].status in settled else int(ExitCode.FAILURE)


def render_backfill(done: Backfill) -> str:
    lines = [done.message]
    lines += [
        f"  {view.run_date}  run {view.run_id}  {view.status.value:<11} {view.run_key}"
        for view in done.runs
    ]
    return "\n".join(lines)


def _intervened(done: Intervention, fmt: str) -> int:
    emit(done, fmt, f"{done.message}\n{render_run(done.run)}")
    return 0


def render_rerun(done: Rerun) -> str:
    return f"{done.message}\n{render_run(done.run)}"


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
