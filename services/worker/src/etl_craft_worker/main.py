"""The `etl-craft worker` command and its `etl-craft-worker` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command, not_yet_available

COMMAND = Command(
    name="worker",
    help="run the worker agent",
    configure=None,
    handler=not_yet_available("worker", "the worker agent"),
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["worker"])
