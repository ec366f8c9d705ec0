"""The `etl-craft api` command and its `etl-craft-api` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command, not_yet_available

COMMAND = Command(
    name="api",
    help="run the HTTP API",
    configure=None,
    handler=not_yet_available("api", "the HTTP API"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["api"])
