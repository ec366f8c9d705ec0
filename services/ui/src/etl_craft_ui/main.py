"""The `etl-craft ui` command and its `etl-craft-ui` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command, not_yet_available

COMMAND = Command(
    name="ui",
    help="run the web UI",
    configure=None,
    handler=not_yet_available("ui", "the web UI"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["ui"])
