"""The `etl-craft catalog` command and its `etl-craft-catalog` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command, not_yet_available

COMMAND = Command(
    name="catalog",
    help="run the catalog builder",
    configure=None,
    handler=not_yet_available("catalog", "the catalog builder"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["catalog"])
