"""etl-craft new PATH: scaffold a working project (SQLite Engine DB, DuckDB warehouse)."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a new or empty folder for the project")
    parser.add_argument(
        "--project_code", metavar="CODE", help="the project's code (default: from the folder name)"
    )


COMMAND = Command(
    name="new",
    help="create a working project in a new or empty folder",
    configure=configure,
    handler="etl_craft.cli.actions.new:handle",
)
