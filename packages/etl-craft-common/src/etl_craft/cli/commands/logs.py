"""etl-craft logs: print an attempt's log, or follow it while the attempt runs."""

from __future__ import annotations

import argparse

from etl_craft.cli import vocabulary
from etl_craft.cli.registry import Command
from etl_craft.core import ranges


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--attempt", type=ranges.ID.argument(), metavar="N", help="the attempt, by id"
    )
    vocabulary.run(parser, help="with --task: the run, by id")
    vocabulary.task(parser, help="with --run: the task, by code (its newest attempt)")
    parser.add_argument(
        "--follow",
        action="store_true",
        help="print lines as they are written, until the attempt ends",
    )


COMMAND = Command(
    name="logs",
    help="print an attempt's log (--attempt N, or --run R --task T); --follow tails it",
    configure=configure,
    handler="etl_craft.cli.actions.logs:handle",
)
