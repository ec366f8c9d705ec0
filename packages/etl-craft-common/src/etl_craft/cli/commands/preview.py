"""etl-craft preview: a SQL task's rows and what its action would write; records nothing."""

from __future__ import annotations

import argparse

from etl_craft.cli import vocabulary
from etl_craft.cli.registry import Command
from etl_craft.core import ranges
from etl_craft.core.defaults import PREVIEW_ROWS


def configure(parser: argparse.ArgumentParser) -> None:
    vocabulary.task(parser, required=True)
    vocabulary.pipeline(
        parser,
        required=False,
        help="the task's pipeline (needed when several pipelines have a task of that code)",
    )
    parser.add_argument(
        "--limit",
        type=ranges.ROW_LIMIT.argument(),
        default=PREVIEW_ROWS,
        help="how many of the SELECT's rows to show",
    )
    vocabulary.run_date(parser, help="YYYY-MM-DD for $$run_date (default: today, as for a new run)")


COMMAND = Command(
    "preview",
    "show a SQL task's SELECT rows and columns and what its action would write, recording nothing",
    configure,
    "etl_craft.cli.actions.preview:handle",
)
