"""etl-craft migrate: etl-craft's migrations, then the project's migrations/ folder."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-validate",
        dest="validate",
        action="store_false",
        help="apply project files without validating the pipelines they change (recorded in "
        "the action); by default a file that leaves one failing etl-craft validate is rolled back",
    )


COMMAND = Command(
    name="migrate",
    help="apply etl-craft's pending migrations, then the project's migrations/ folder",
    configure=configure,
    handler="etl_craft.cli.actions.migrate:handle",
)
