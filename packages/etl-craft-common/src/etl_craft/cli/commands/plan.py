"""etl-craft plan: what the project's pipeline specs would change in the Engine DB."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--write",
        action="store_true",
        help="write the plan as the project's next migration file (etl-craft migrate applies it)",
    )
    parser.add_argument(
        "--no-validate",
        dest="validate",
        action="store_false",
        help="with --write, write the file even when migrate would refuse it: the bypass and "
        "what validate found are recorded in its header (apply it with migrate --no-validate)",
    )
    parser.add_argument(
        "--sql",
        action="store_true",
        help="show the migration file's SQL too",
    )


COMMAND = Command(
    "plan",
    "compare pipelines/*.yml with the Engine DB: CFG_ rows, DAG edges, inferred dependencies, "
    "downstream columns and schedule ticks that would change; --write makes it a migration",
    configure,
    "etl_craft.cli.actions.plan:handle",
)
