"""The `etl-craft server` command and its `etl-craft-overseer` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command
from etl_craft.cli.telemetry import add_telemetry_options
from etl_craft.core import ranges

METRICS_PORT = 9730


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pool-provider",
        choices=("local", "queue"),
        default="local",
        help="local: task processes on this host (the only choice on SQLite); queue: worker "
        "agents (etl-craft worker) claim attempts from the PostgreSQL Engine DB",
    )
    parser.add_argument("--pool", default="default", help="the queue provider's pool")
    parser.add_argument(
        "--standby",
        action="store_true",
        help="when another server leads, wait and take over when it stops instead of exiting",
    )
    parser.add_argument(
        "--ingestion-slots",
        type=ranges.SLOTS.argument(),
        metavar="N",
        help="local provider: PYTHON tasks at once (default: Orchestration max_parallel_tasks)",
    )
    parser.add_argument(
        "--warehouse-slots",
        type=ranges.SLOTS.argument(),
        metavar="M",
        help="local provider: warehouse tasks at once (default: Orchestration max_parallel_tasks)",
    )
    parser.add_argument(
        "--run-log",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="log a line per admitted and per ended run at INFO, whatever --log-level says "
        "(default: on)",
    )
    add_telemetry_options(parser, METRICS_PORT)


COMMAND = Command(
    name="server",
    help="run the overseer: schedules, admission, dispatch and reconciliation",
    configure=configure,
    handler="etl_craft_overseer.server_command:handle",
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["server"])
