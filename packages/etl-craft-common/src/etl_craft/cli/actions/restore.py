"""etl-craft restore --table T --run R --reason TEXT: an Iceberg table back to a run's snapshot."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.operations.restore import RestoreView, restore


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        view = restore(ctx, args.table, args.run, args.reason)
    finally:
        ctx.close()
    emit(view, args.format, render(view))
    return 0


def render(view: RestoreView) -> str:
    return (
        f"{view.table}: restored snapshot {view.snapshot_from} (run {view.run_id}, task run "
        f"{view.task_run_id}, {view.rows} row(s)) as the new snapshot {view.snapshot_to}; "
        f"recorded as action {view.action_id}"
    )
