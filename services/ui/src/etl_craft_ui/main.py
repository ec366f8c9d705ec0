"""The `etl-craft ui` command and its `etl-craft-ui` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command
from etl_craft_ui.options import DEFAULT_HOST, DEFAULT_PORT, configure_ui

UI = Command(
    "ui",
    f"serve the web UI (default {DEFAULT_HOST}:{DEFAULT_PORT}); sign in with an API token",
    configure_ui,
    "etl_craft_ui.commands:handle_ui",
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    UI.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["ui"])
