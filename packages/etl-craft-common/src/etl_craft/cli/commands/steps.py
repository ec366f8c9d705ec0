"""etl-craft steps --pipeline_code P: the pipeline's tasks by wave, for display only."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pipeline_code", metavar="P", required=True, help="the pipeline")


COMMAND = Command(
    name="steps",
    help="show a pipeline's tasks by wave, with handler and ACTION (display only)",
    configure=configure,
    handler="etl_craft.cli.actions.steps:handle",
)
