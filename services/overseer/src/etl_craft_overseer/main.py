"""The `etl-craft server` command and its `etl-craft-overseer` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command, not_yet_available

COMMAND = Command(
    name="server",
    help="run the overseer (schedules, admission, dispatch)",
    configure=None,
    handler=not_yet_available("server", "the overseer (schedules, admission, dispatch)"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["server"])
