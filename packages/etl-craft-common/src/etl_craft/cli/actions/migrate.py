"""etl-craft migrate: etl-craft's migrations, then the project's migrations/ folder."""

from __future__ import annotations

import argparse
from dataclasses import replace

from etl_craft.cli.actions.bundle import render as bundle_text
from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.enginedb.migrations import MigrationReport
from etl_craft.operations.bundles import publish_bundle
from etl_craft.operations.setup import MigrateReport, migrate


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        report = migrate(ctx, validated=args.validate)
        if args.publish_bundle:
            report = replace(report, bundle=publish_bundle(ctx))
    finally:
        ctx.close()
    emit(report, args.format, render(report))
    return 0


def render(report: MigrateReport) -> str:
    lines = [f"Engine DB {report.engine_db} ({report.dialect}), project {report.project}"]
    lines.extend(_stream(stream) for stream in report.streams)
    lines.append(f"  recorded as action {report.action_id}")
    if report.bundle is not None:
        lines.append(f"  {bundle_text(report.bundle)}")
    return "\n".join(lines)


def _stream(stream: MigrationReport) -> str:
    label = f"{stream.stream.value} {stream.scope}"
    if not stream.applied:
        return (
            f"  {label}: up to date at version {stream.version} ({stream.already_applied} applied)"
        )
    return f"  {label}: applied {', '.join(stream.applied)}; now at version {stream.version}"
