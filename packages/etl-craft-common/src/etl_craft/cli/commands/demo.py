"""etl-craft demo: run the Support Insights demo in a working folder, with progress on stderr."""

from __future__ import annotations

import argparse
from pathlib import Path

from etl_craft.cli.registry import Command
from etl_craft.core.defaults import DEMO_FOLDER


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--folder",
        type=Path,
        default=DEMO_FOLDER,
        help=f"the working folder, created or reused (default: ./{DEMO_FOLDER})",
    )
    # Also accepted before the command, as for every command.
    parser.add_argument(
        "--profile", default=argparse.SUPPRESS, help="postgres: PostgreSQL Engine DB and warehouse"
    )
    parser.add_argument(
        "--source", type=Path, help="the demo project to copy (default: examples/demo/etl-craft)"
    )


COMMAND = Command(
    name="demo",
    help="run the Support Insights demo: sources, Engine DB, warehouse and every pipeline",
    configure=configure,
    handler="etl_craft.cli.actions.demo:handle",
)
