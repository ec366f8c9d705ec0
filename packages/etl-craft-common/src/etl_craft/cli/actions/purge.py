"""etl-craft purge: delete history past its retention, or count it with --dry-run."""

from __future__ import annotations

import argparse
from contextlib import ExitStack

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.config.sections import build_retention
from etl_craft.core.errors import ConfigurationError
from etl_craft.core.time import utc_now
from etl_craft.operations.retention.archive import Archive
from etl_craft.operations.retention.purge import PurgeRequest, PurgeView, purge
from etl_craft.warehouse import connect


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        connector = ctx.connector
        retention = connector.retention if connector else build_retention(None)
        request = PurgeRequest(retention, utc_now(), args.project, dry_run=args.dry_run)
        with ExitStack() as stack:
            archive = None
            if args.archive_to:
                if connector is None:
                    raise ConfigurationError(
                        "etl-craft purge --archive-to found no craft-connector.yml, so it knows "
                        "no warehouse; run it from the project folder or pass --config"
                    )
                warehouse = stack.enter_context(connect(connector.warehouse))
                archive = Archive(warehouse, args.archive_to)
            view = purge(
                ctx.engine, ctx.actor, request, ctx.attempt_logs_dir, archive, ctx.log_store
            )
    finally:
        ctx.close()
    emit(view, args.format, render(view))
    return 0


def render(view: PurgeView) -> str:
    verb = "would delete" if view.dry_run else "deleted"
    scope = f"project {view.project}" if view.project else "every project"
    kept = (
        "kept for ever"
        if view.interventions_before is None
        else f"before {view.interventions_before:%Y-%m-%d}"
    )
    lines = [
        f"purge of {scope}: runs ended before {view.runs_ended_before:%Y-%m-%d %H:%M} UTC, "
        f"consumption before {view.consumption_before:%Y-%m-%d}, interventions {kept}, "
        f"attempt logs older than {view.logs_older_than:%Y-%m-%d}",
        *(f"  {table.table}: {verb} {table.rows} row(s)" for table in view.tables),
        f"  attempt log files: {verb} {view.log_files}",
    ]
    if view.dry_run:
        lines.append("dry run: nothing was deleted")
    elif view.archive_to:
        lines.append(f"archived into warehouse schema {view.archive_to} first")
    if view.action_ids:
        lines.append(f"recorded as {len(view.action_ids)} purge action(s) in AUD_ACTIONS")
    return "\n".join(lines)
