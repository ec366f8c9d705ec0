"""etl-craft validate: every active pipeline's metadata checked; exit 1 on any FAIL."""

from __future__ import annotations

import argparse

from etl_craft.cli import vocabulary
from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    vocabulary.pipeline(
        parser, required=False, help="check only this pipeline (cycles still span all)"
    )


COMMAND = Command(
    name="validate",
    help="check every active pipeline's metadata without running anything",
    configure=configure,
    handler="etl_craft.cli.actions.validate:handle",
)
