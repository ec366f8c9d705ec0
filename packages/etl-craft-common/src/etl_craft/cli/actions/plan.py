"""etl-craft plan: the specs' changes for people, or the plan document with --format json."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from datetime import datetime

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.core.errors import ExitCode, UsageError
from etl_craft.operations.specs.effects import AffectedTask, EdgeChange, PipelineTicks
from etl_craft.operations.specs.plan import RowChange, SpecPlan, plan_specs, write_plan
from etl_craft.specs.inference import EdgeOutcome, InferredEdge


def handle(args: argparse.Namespace) -> int:
    if not args.validate and not args.write:
        raise UsageError("--no-validate goes with --write; add --write or leave it out")
    ctx = operation_context(args)
    try:
        plan = write_plan(ctx, validated=args.validate) if args.write else plan_specs(ctx)
    finally:
        ctx.close()
    emit(plan, args.format, render(plan, sql=args.sql))
    # CI reads the exit code: a plan migrate would refuse fails the check, unless it was
    # written on purpose without validation.
    refused = plan.refusal is not None and plan.written is None
    return int(ExitCode.METADATA) if refused else 0


def render(plan: SpecPlan, *, sql: bool = False) -> str:
    lines = [f"project {plan.project}: {len(plan.pipelines)} pipeline spec(s)"]
    if not plan.changes:
        lines.append("no CFG_ row changes: the Engine DB holds what the specs describe")
    else:
        lines.append(f"CFG_ rows ({len(plan.changes)} change(s)):")
        lines += [f"  {line}" for change in plan.changes for line in _change(change)]
    if plan.dag:
        lines.append("DAG:")
        lines += [f"  {_edge(edge)}" for edge in plan.dag]
    if plan.inferred:
        lines.append("inferred dependencies:")
        lines += [f"  {_inferred(edge)}" for edge in plan.inferred]
    if plan.untraced:
        lines.append("not traced, so no dependency is inferred for them (state them):")
        lines += [f"  {task}" for task in plan.untraced]
    for affected in plan.affected:
        lines += _affected(affected)
    for ticks in plan.ticks:
        lines += _ticks(ticks)
    lines += _outcome(plan)
    if sql and plan.sql:
        lines += ["", plan.sql.rstrip()]
    return "\n".join(lines)


def _change(change: RowChange) -> list[str]:
    key = ", ".join(f"{name} {value}" for name, value in change.key.items())
    sign = {"add": "+", "change": "~", "remove": "-"}[change.operation]
    head = f"{sign} {change.kind.replace('_', ' ')} ({key})"
    if change.operation == "add":
        return [head, *(f"    {c} = {v!r}" for c, v in (change.after or {}).items())]
    if change.after is None:
        return [head + ": deleted"]
    if change.operation == "remove":
        return [head + ": switched off (ACTIVE_FLAG N)"]
    return [head, *_fields(change.before or {}, change.after)]


def _fields(before: Mapping[str, object], after: Mapping[str, object]) -> list[str]:
    return [f"    {column}: {before.get(column)!r} -> {value!r}" for column, value in after.items()]


def _edge(edge: EdgeChange) -> str:
    if edge.upstream is None:
        return f"{'+' if edge.change == 'added' else '-'} task {edge.task}"
    if edge.change == "added":
        return f"+ {edge.task} after {edge.upstream} ({edge.type_after})"
    if edge.change == "removed":
        return f"- {edge.task} after {edge.upstream} ({edge.type_before})"
    return f"~ {edge.task} after {edge.upstream}: {edge.type_before} -> {edge.type_after}"


def _inferred(edge: InferredEdge) -> str:
    what = {
        EdgeOutcome.WRITTEN: "a dependency row",
        EdgeOutcome.STATED: "stated in the spec already",
        EdgeOutcome.IMPLIED: "implied by other dependencies, not written",
        EdgeOutcome.CYCLE: "not written: the writer depends on the reader; state the order",
    }[edge.outcome]
    return f"{edge.pipeline}.{edge.task} reads {edge.table} after {edge.upstream_task}: {what}"


def _affected(affected: AffectedTask) -> list[str]:
    if affected.target is None:
        return [f"{affected.task} ({affected.reason}) writes no table"]
    head = f"{affected.task} ({affected.reason}) writes {affected.target}"
    if not affected.columns:
        return [head + "; no traced columns downstream"]
    return [head + "; affected columns:", *(f"  {column}" for column in affected.columns)]


def _ticks(ticks: PipelineTicks) -> list[str]:
    lines = [
        f"schedule of {ticks.pipeline} ({ticks.timezone}): "
        f"{ticks.schedule_before!r} -> {ticks.schedule_after!r}"
    ]
    if ticks.before:
        lines.append(f"  next ticks now:   {_instants(ticks.before)}")
    if ticks.after:
        lines.append(f"  next ticks after: {_instants(ticks.after)}")
    if ticks.problem:
        lines.append(f"  {ticks.problem}")
    return lines


def _instants(ticks: tuple[datetime, ...]) -> str:
    return ", ".join(tick.isoformat(timespec="minutes") for tick in ticks)


def _outcome(plan: SpecPlan) -> list[str]:
    if plan.refusal is not None and plan.written is not None:
        return [
            f"wrote {plan.written} without validation (recorded in its header); migrate would "
            f"refuse it: {plan.refusal}",
            "apply it with etl-craft migrate --no-validate",
        ]
    if plan.refusal is not None:
        refused = f"migrate would refuse {plan.file_name}" if plan.file_name else "a run would fail"
        return [f"{refused}: {plan.refusal}"]
    if plan.file_name is None:
        return []
    if plan.written is not None:
        return [f"wrote {plan.written}; apply it with etl-craft migrate"]
    return [f"as migration {plan.file_name}: write it with etl-craft plan --write"]
