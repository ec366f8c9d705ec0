"""etl-craft steps --pipeline P: the pipeline's tasks by wave, for display only."""

from __future__ import annotations

import argparse

from etl_craft.cli import vocabulary
from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    vocabulary.pipeline(parser)


COMMAND = Command(
    name="steps",
    help="show a pipeline's tasks by wave, with handler and ACTION (display only)",
    configure=configure,
    handler="etl_craft.cli.actions.steps:handle",
)
