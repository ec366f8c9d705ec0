"""etl-craft lineage: a summary of the project's column lineage, or a walk from a table."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command
from etl_craft.core import ranges


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--table", metavar="T", help="walk from this table (schema.table)")
    parser.add_argument("--column", metavar="C", help="walk from this column of --table")
    way = parser.add_mutually_exclusive_group()
    way.add_argument(
        "--upstream",
        dest="direction",
        action="store_const",
        const="upstream",
        help="where the table or column comes from (the default)",
    )
    way.add_argument(
        "--downstream",
        dest="direction",
        action="store_const",
        const="downstream",
        help="what reads the table or column",
    )
    parser.add_argument(
        "--depth", type=ranges.DEPTH.argument(), metavar="N", help="stop after N hops"
    )
    parser.add_argument(
        "--with-warehouse",
        action="store_true",
        help="read the columns of tables no task writes from the warehouse",
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when any SELECT could not be traced"
    )


COMMAND = Command(
    name="lineage",
    help="show the column lineage of the project's tables across tasks and pipelines",
    configure=configure,
    handler="etl_craft.cli.actions.lineage:handle",
)
