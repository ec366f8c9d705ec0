"""etl-craft rehash --target S.T [--dry-run]: move a merge target to the current change hash."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.operations.rehash import RehashView, rehash


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        view = rehash(ctx, args.target, dry_run=args.dry_run)
    finally:
        ctx.close()
    emit(view, args.format, render(view))
    return 0


def render(view: RehashView) -> str:
    before = "unknown" if view.version_from is None else str(view.version_from)
    lines = [
        f"{view.target} ({view.warehouse}): change-hash version {before} -> {view.version_to}",
        f"  compare columns {', '.join(view.compare_columns) or '(none)'}, "
        f"from {', '.join(view.merge_tasks)}",
    ]
    if view.dry_run:
        lines.append(
            f"  dry run: {view.rows_changed} of {view.rows_scanned} row(s) would change; "
            "nothing was written"
        )
    else:
        lines.append(
            f"  {view.rows_changed} of {view.rows_scanned} row(s) rewritten; "
            f"recorded as action {view.action_id}"
        )
    return "\n".join(lines)
