"""etl-craft explain: why a task of a run is in its state, and what would make it run."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.operations.explain.past import MOMENT_FORMAT, parse_moment
from etl_craft.operations.explain.task import DependencyView, Explanation, explain_task
from etl_craft.operations.validate.blocking import describe


def handle(args: argparse.Namespace) -> int:
    at = None if args.at is None else parse_moment(args.at)
    ctx = operation_context(args)
    try:
        found = explain_task(ctx, args.pipeline_code, args.task_code, args.run_id, at)
    finally:
        ctx.close()
    emit(found, args.format, render(found))
    return 0


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _dependency(dep: DependencyView) -> str:
    met = "pending" if dep.met is None else ("met" if dep.met else "NOT MET")
    status = dep.upstream_status.value if dep.upstream_status else "NOT RUN"
    rows = "" if dep.upstream_rows is None else f" rows={dep.upstream_rows}"
    return f"    {dep.upstream}  {dep.type} dependency  upstream {status}{rows}  {met}"


def render(found: Explanation) -> str:
    status = found.task_status.value if found.task_status else "NOT RUN"
    error = f", latest error: {found.latest_error}" if found.latest_error else ""
    when = f" at {found.at:{MOMENT_FORMAT}}" if found.at else ""
    lines = [
        f"{found.task_code} in run {found.run_id} of {found.pipeline_code} ({found.run_key})"
        f"{when}: {found.state}",
        f"  {found.sentence}",
        f"  run: {found.run_status}, paused: {_yes(found.paused)}, "
        f"cancel pending: {_yes(found.cancel_pending)}",
        f"  task: {status}, attempts {found.attempts}{error}",
        f"  RUN_CONDITION {found.run_condition}: needs {found.required_count} of "
        f"{len(found.dependencies)} dependencies",
    ]
    if found.dependencies:
        lines += ["  dependencies:", *(_dependency(dep) for dep in found.dependencies)]
    if found.blocking_findings:
        lines += ["  blocking findings of the pipeline:"]
        lines += [f"    {describe(finding)}" for finding in found.blocking_findings]
    return "\n".join([*lines, *_gates(found), _retries(found)])


def _gates(found: Explanation) -> list[str]:
    decisions = [
        f"    {d.upstream_pipeline}{'.' + d.upstream_code if d.upstream_code else ''}  {d.result}  "
        f"{d.decided_at:%Y-%m-%d %H:%M:%S} by {d.decided_by}: {d.reason}"
        for d in found.gate_decisions
    ]
    waits = [
        f"  gate wait: looked {w.looks} times, next check {w.next_check_at:%Y-%m-%d %H:%M:%S}, "
        f"gives up {w.wait_until:%Y-%m-%d %H:%M:%S}: {w.last_reason or '-'}"
        for w in found.gate_waits
        if w.resolved_at is None
    ]
    return (["  cross-pipeline decisions:", *decisions] if decisions else []) + waits


def _retries(found: Explanation) -> str:
    retry = found.retry
    line = (
        f"  retries: RETRIES {retry.retries}, RETRY_DELAY_SECONDS {retry.delay_seconds:g}, "
        f"RETRY_BACKOFF {retry.backoff:g}"
    )
    if retry.next_attempt is None:
        return line
    when = f"{retry.not_before:%Y-%m-%d %H:%M:%S} UTC" if retry.not_before else "now"
    return f"{line}; attempt {retry.next_attempt} starts {when}"
