"""etl-craft purge [--dry-run] [--project P] [--archive-to SCHEMA]: delete history past its
retention."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="count what would be deleted, table by table, and delete nothing",
    )
    parser.add_argument(
        "--project",
        metavar="P",
        default=argparse.SUPPRESS,  # the global --project, also accepted here
        help="purge this project's history only, given here or before the command (default: "
        "every project)",
    )
    parser.add_argument(
        "--archive-to",
        metavar="SCHEMA",
        help="copy every purged row into this warehouse schema first, one table per Engine DB "
        "table",
    )


COMMAND = Command(
    name="purge",
    help="delete run history past the Retention section's limits, oldest first",
    configure=configure,
    handler="etl_craft.cli.actions.purge:handle",
)
