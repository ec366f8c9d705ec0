"""etl-craft graph --pipeline P: the pipeline's tasks with their upstream edges."""

from __future__ import annotations

import argparse

from etl_craft.cli import vocabulary
from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    vocabulary.pipeline(parser)


COMMAND = Command(
    name="graph",
    help="show a pipeline's tasks with their upstream edges and dependency types",
    configure=configure,
    handler="etl_craft.cli.actions.graph:handle",
)
