"""The `etl-craft catalog` command and its `etl-craft-catalog` console entry point.

Each subcommand lives in its own module and is listed here.
"""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command
from etl_craft_catalog.build import BUILD

SUBCOMMANDS = (BUILD,)


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="catalog_action", metavar="ACTION", required=True)
    for subcommand in SUBCOMMANDS:
        subcommand.add_to(actions)


def _choose(args: argparse.Namespace) -> int:
    # Never called: each subcommand's parser sets its own handler.
    raise AssertionError(f"no handler for catalog {args.catalog_action}")


COMMAND = Command(
    name="catalog", help="build the data catalog site", configure=configure, handler=_choose
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["catalog"])
