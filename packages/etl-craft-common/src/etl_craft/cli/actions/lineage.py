"""etl-craft lineage: a summary of the project's column lineage, or a walk from a table."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.core.errors import UsageError
from etl_craft.lineage import Direction
from etl_craft.operations.lineage import (
    LineagePath,
    LineageSummary,
    UntracedTask,
    lineage_path,
    lineage_summary,
)


def handle(args: argparse.Namespace) -> int:
    if args.table is None and (args.column or args.direction or args.depth is not None):
        raise UsageError(
            "--column, --upstream, --downstream and --depth walk from a table; add --table T"
        )
    if args.depth is not None and args.depth < 1:
        raise UsageError(f"--depth is {args.depth}; expected a number of hops of 1 or more")
    ctx = operation_context(args)
    try:
        report: LineageSummary | LineagePath
        if args.table is None:
            report = lineage_summary(ctx, with_warehouse=args.with_warehouse)
            text = render_summary(report)
        else:
            direction = Direction(args.direction or Direction.UPSTREAM)
            report = lineage_path(
                ctx,
                args.table,
                args.column,
                direction,
                args.depth,
                with_warehouse=args.with_warehouse,
            )
            text = render_path(report)
    finally:
        ctx.close()
    emit(report, args.format, text)
    return 1 if args.strict and report.untraced else 0


def render_summary(report: LineageSummary) -> str:
    lines = [
        f"lineage of project {report.project}: {report.tables} tables, {report.columns} "
        f"columns, {report.tasks} tasks ({report.traced} SELECT(s) traced, "
        f"{report.reused} unchanged)"
    ]
    lines += [f"  {e.source} -> {e.target} [{e.task}]" for e in report.table_edges]
    lines += _untraced(report.untraced)
    return "\n".join(lines)


def render_path(report: LineagePath) -> str:
    start = f"{report.table}.{report.column}" if report.column else report.table
    lines = [f"{report.direction.value} of {start} (project {report.project})"]
    for c in report.columns:
        lines.append(
            f"  {'  ' * (c.depth - 1)}{c.source_table}.{c.source_column} -> "
            f"{c.target_table}.{c.target_column} [{c.kind.value}, {c.task}]"
        )
    lines += [f"  {t.source} -> {t.target} [{t.task}]" for t in report.tables]
    if not report.columns and not report.tables:
        lines.append(
            "  nothing: it is a root source"
            if report.direction is Direction.UPSTREAM
            else "  nothing reads it"
        )
    lines += _untraced(report.untraced)
    return "\n".join(lines)


def _untraced(tasks: tuple[UntracedTask, ...]) -> list[str]:
    return [
        f"  not traced: {t.pipeline_code}.{t.task_code}"
        + (f" (writes {t.target})" if t.target else "")
        + f": {t.reason}"
        for t in tasks
    ]
