"""Running pipelines (the plain run, extended by control.RUN), status, history and reconcile."""

from __future__ import annotations

import argparse
from datetime import date

from etl_craft.cli.registry import Command
from etl_craft.core import ranges


def _pipeline(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pipeline_code", "--pipeline-code", dest="pipeline_code", required=True)


def _run_selection(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    parser.add_argument("--run-id", type=ranges.ID.argument(), help="the run to act on, by id")


def configure_run(parser: argparse.ArgumentParser) -> None:
    _run_selection(parser)
    parser.add_argument("--run-key", help="the run to act on (created when none has this key)")
    parser.add_argument("--run-date", type=date.fromisoformat, help="YYYY-MM-DD for a new run")
    parser.add_argument(
        "--task_code",
        "--task-code",
        dest="task_codes",
        action="append",
        default=[],
        help="run only this task (repeatable); exits WAITING when its dependencies are not met",
    )


def configure_history(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    parser.add_argument("--limit", type=ranges.ROW_LIMIT.argument(), default=20)


STATUS = Command(
    "status",
    "show a run and its tasks",
    _run_selection,
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
