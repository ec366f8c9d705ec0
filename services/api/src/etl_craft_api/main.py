"""`etl-craft api` and `etl-craft token`, and the `etl-craft-api` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft_api.commands import API, TOKEN


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    API.add_to(subparsers)
    TOKEN.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["api"])
