"""etl-craft clone: copy what changed in the AUD_ tables into the warehouse mirror."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.core.errors import ConfigurationError
from etl_craft.operations.cloning.clone import CloneView, clone_project


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        if ctx.connector is None:
            raise ConfigurationError(
                "etl-craft clone found no craft-connector.yml, so it knows no warehouse or "
                "Cloning section; run it from the project folder or pass --config"
            )
        view = clone_project(ctx.engine, ctx.connector)
    finally:
        ctx.close()
    emit(view, args.format, render(view))
    return 0


def render(view: CloneView) -> str:
    if view.skipped:
        return (
            f"clone into {view.mirror_schema} skipped: another clone held the clone lock past "
            "Cloning.lock_wait_seconds; it copies what changed, and the next clone the rest"
        )
    lines = [f"clone into warehouse schema {view.mirror_schema}:"]
    for table in view.tables:
        again = f", {table.reread} re-read within the overlap" if table.reread else ""
        gone = f", {table.deleted} deleted (purged)" if table.deleted else ""
        lines.append(f"  {table.table}: {table.copied} row(s) copied{again}{gone}")
    lines.append(f"{view.copied} row(s) copied and {view.deleted} deleted in all")
    return "\n".join(lines)
