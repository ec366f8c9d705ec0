"""etl-craft explain: why a task of a run is in its state, and what would make it run."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command
from etl_craft.core import ranges


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pipeline_code", "--pipeline-code", dest="pipeline_code", required=True)
    parser.add_argument("--task_code", "--task-code", dest="task_code", required=True)
    parser.add_argument(
        "--run-id",
        type=ranges.ID.argument(),
        help="the run, by id (default: the pipeline's single live run)",
    )
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
