"""etl-craft rehash --target S.T [--dry-run]: move a merge target to the current change hash."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--target", required=True, help="the merge target, schema.table")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="count the rows whose HASH_KEY would change, and change nothing",
    )


COMMAND = Command(
    name="rehash",
    help="recompute a merge target's HASH_KEY values with the current change hash",
    configure=configure,
    handler="etl_craft.cli.actions.rehash:handle",
)
