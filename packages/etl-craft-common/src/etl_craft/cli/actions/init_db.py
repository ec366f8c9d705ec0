"""etl-craft init-db: create the Engine DB schema, or bring an existing one up to date."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.operations.setup import InitReport, init_db


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        report = init_db(ctx)
    finally:
        ctx.close()
    emit(report, args.format, render(report))
    return 0


def render(report: InitReport) -> str:
    engine = report.engine
    applied = ", ".join(engine.applied) if engine.applied else "nothing new"
    return "\n".join(
        [
            f"Engine DB {report.engine_db} ({report.dialect}) is at schema version "
            f"{engine.version}",
            f"  applied: {applied}",
            f"  project: {report.project}",
            f"  guarded tables: {report.guarded_tables}",
            f"  recorded as action {report.action_id}",
        ]
    )
