"""The `etl-craft ui` command and its `etl-craft-ui` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft_ui.commands import UI


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    UI.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["ui"])
