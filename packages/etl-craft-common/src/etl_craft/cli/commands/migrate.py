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
    parser.add_argument(
        "--publish-bundle",
        action="store_true",
        help="once migrated, publish the project's files as a bundle (etl-craft bundle "
        "publish), so metadata and files are deployed in one step",
    )


COMMAND = Command(
    name="migrate",
    help="apply etl-craft's pending migrations, then the project's migrations/ folder",
    configure=configure,
    handler="etl_craft.cli.actions.migrate:handle",
)
