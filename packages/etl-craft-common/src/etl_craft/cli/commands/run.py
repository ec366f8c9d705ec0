"""Running pipelines (the plain run, extended by control.RUN), status, history and reconcile."""

from __future__ import annotations

import argparse

from etl_craft.cli import vocabulary
from etl_craft.cli.registry import Command
from etl_craft.core import ranges


def configure_status(parser: argparse.ArgumentParser) -> None:
    vocabulary.pipeline(parser)
    vocabulary.run(
        parser, help="the run, by id (default: the live run, else the pipeline's latest)"
    )


def configure_run(parser: argparse.ArgumentParser) -> None:
    vocabulary.pipeline(parser)
    vocabulary.run(parser, help="the run to act on, by id")
    vocabulary.run_key(parser, help="the run to act on (created when none has this key)")
    vocabulary.run_date(parser, help="YYYY-MM-DD for a new run")
    vocabulary.task(
        parser,
        repeatable=True,
        help="run only this task (repeatable); exits WAITING when its dependencies are not met",
    )


def configure_history(parser: argparse.ArgumentParser) -> None:
    vocabulary.pipeline(parser)
    parser.add_argument("--limit", type=ranges.ROW_LIMIT.argument(), default=20)


STATUS = Command(
    "status",
    "show a run and its tasks (default: the live run, else the latest)",
    configure_status,
    "etl_craft.cli.actions.status:handle_status",
)


HISTORY = Command(
    "history",
    "list a pipeline's runs, newest first",
    configure_history,
    "etl_craft.cli.actions.status:handle_history",
)


RECONCILE = Command(
    "reconcile",
    "settle attempts whose owner stopped renewing its lease",
    None,
    "etl_craft.cli.actions.run:handle_reconcile",
)
