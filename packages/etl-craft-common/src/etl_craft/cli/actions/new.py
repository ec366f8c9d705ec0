"""etl-craft new PATH: scaffold a working project (SQLite Engine DB, DuckDB warehouse)."""

from __future__ import annotations

import argparse
from pathlib import Path

from etl_craft.cli.output import emit
from etl_craft.operations.scaffold import NewProjectReport, new_project


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
