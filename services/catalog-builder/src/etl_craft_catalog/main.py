"""The `etl-craft catalog` command and its `etl-craft-catalog` console entry point.

Each subcommand lives in its own module and is listed here.
"""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command
from etl_craft_catalog import run_command, serve_command
from etl_craft_catalog.build import BUILD

SERVE = Command(
    name="serve",
    help=serve_command.HELP,
    configure=serve_command.configure_serve,
    handler=serve_command.handle_serve,
)
RUN = Command(
    name="run",
    help=run_command.HELP,
    configure=run_command.configure_run,
    handler=run_command.handle_run,
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
