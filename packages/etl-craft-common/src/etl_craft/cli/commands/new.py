"""etl-craft new PATH: scaffold a working project (SQLite Engine DB, DuckDB warehouse)."""

from __future__ import annotations

import argparse
from pathlib import Path

from etl_craft.cli.output import emit
from etl_craft.cli.registry import Command
from etl_craft.operations.scaffold import NewProjectReport, new_project


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a new or empty folder for the project")
    parser.add_argument(
        "--project_code", metavar="CODE", help="the project's code (default: from the folder name)"
    )


def handle(args: argparse.Namespace) -> int:
    report = new_project(Path(args.path), args.project_code)
    emit(report, args.format, render(report))
    return 0


def render(report: NewProjectReport) -> str:
    lines = [f"created project {report.project_code} in {report.project_folder}"]
    lines.extend(f"  {name}" for name in report.files)
    lines.append("next:")
    lines.extend(f"  {step}" for step in report.next_steps)
    return "\n".join(lines)


COMMAND = Command(
    name="new",
    help="create a working project in a new or empty folder",
    configure=configure,
    handler=handle,
)
