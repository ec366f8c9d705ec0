"""The `etl-craft catalog` command and its `etl-craft-catalog` console entry point.

Each subcommand lives in its own module and is listed here.
"""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command
from etl_craft_catalog.options import (
    RUN_HELP,
    SERVE_HELP,
    configure_build,
    configure_run,
    configure_serve,
)

BUILD = Command(
    name="build",
    help="build the static catalog site into --output, swapped in whole",
    configure=configure_build,
    handler="etl_craft_catalog.build:handle",
)
SERVE = Command(
    name="serve",
    help=SERVE_HELP,
    configure=configure_serve,
    handler="etl_craft_catalog.serve_command:handle_serve",
)
RUN = Command(
    name="run",
    help=RUN_HELP,
    configure=configure_run,
    handler="etl_craft_catalog.run_command:handle_run",
)
SUBCOMMANDS = (BUILD, SERVE, RUN)


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="catalog_action", metavar="ACTION", required=True)
    for subcommand in SUBCOMMANDS:
        subcommand.add_to(actions)


def _choose(args: argparse.Namespace) -> int:
    # Never called: each subcommand's parser sets its own handler.
    raise AssertionError(f"no handler for catalog {args.catalog_action}")


COMMAND = Command(
    name="catalog",
    help="build, serve and keep fresh the data catalog site",
    configure=configure,
    handler=_choose,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["catalog", "run"])
