"""etl-craft restore --table T --run R --reason TEXT: an Iceberg table back to a run's snapshot."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command
from etl_craft.core import ranges


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", required=True, help="the Iceberg table, namespace.table")
    parser.add_argument(
        "--run",
        required=True,
        type=ranges.ID.argument(),
        help="the pipeline run whose snapshot to restore",
    )
    parser.add_argument("--reason", required=True, help="why, recorded with the action")


COMMAND = Command(
    name="restore",
    help="put an Iceberg table back to the snapshot a run left, as a new snapshot",
    configure=configure,
    handler="etl_craft.cli.actions.restore:handle",
)
