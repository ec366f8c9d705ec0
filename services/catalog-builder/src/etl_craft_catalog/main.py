"""The `etl-craft catalog` command and its `etl-craft-catalog` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command
from etl_craft_catalog import run_command, serve_command


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_text, add, handle in (
        ("serve", serve_command.HELP, serve_command.configure_serve, serve_command.handle_serve),
        ("run", run_command.HELP, run_command.configure_run, run_command.handle_run),
    ):
        sub = actions.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--format", choices=("text", "json"), default=argparse.SUPPRESS)
        add(sub)
        sub.set_defaults(catalog_handler=handle)


def handle(args: argparse.Namespace) -> int:
    return int(args.catalog_handler(args))


COMMAND = Command(
    name="catalog",
    help="build, serve and keep fresh the data catalog site",
    configure=configure,
    handler=handle,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["catalog", "run"])
