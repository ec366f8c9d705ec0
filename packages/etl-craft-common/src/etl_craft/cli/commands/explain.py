"""etl-craft explain: why a task of a run is in its state, and what would make it run."""

from __future__ import annotations

import argparse

from etl_craft.cli import vocabulary
from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    vocabulary.pipeline(parser)
    vocabulary.task(parser, required=True)
    vocabulary.run(parser, help="the run, by id (default: the pipeline's single live run)")
    parser.add_argument(
        "--at",
        metavar="TIME",
        help="explain the task as it was at this past moment, ISO 8601 (UTC without an offset)",
    )


COMMAND = Command(
    "explain",
    "say why a task of a run is in its state and what would make it run",
    configure,
    "etl_craft.cli.actions.explain:handle",
)
