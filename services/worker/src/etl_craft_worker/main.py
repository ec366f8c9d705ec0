"""The `etl-craft worker` command and its `etl-craft-worker` console entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command
from etl_craft.cli.telemetry import add_telemetry_options
from etl_craft.core import ranges

DEFAULT_HEARTBEAT_SECONDS = 10.0
METRICS_PORT = 9731
LOG_PORT = 9732


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pool", help="the pool to claim from (default: the project's DEFAULT_POOL, else default)"
    )
    parser.add_argument(
        "--ingestion-slots",
        type=ranges.SLOTS.argument(),
        default=4,
        metavar="N",
        help="how many PYTHON attempts run at once (default 4)",
    )
    parser.add_argument(
        "--warehouse-slots",
        type=ranges.SLOTS.argument(),
        default=16,
        metavar="M",
        help="how many SQL, BUSINESS_RULES and EMAIL_ALERT attempts run at once (default 16)",
    )
    parser.add_argument(
        "--drain-seconds",
        type=ranges.DRAIN_SECONDS.argument(),
        default=300.0,
        metavar="S",
        help="on SIGTERM, how long running attempts may finish before they are stopped "
        "(default 300; 0 stops them at once)",
    )
    parser.add_argument(
        "--heartbeat-seconds",
        type=ranges.HEARTBEAT_SECONDS.argument(),
        metavar="S",
        help="how often leases are renewed and cancel requests read "
        f"(default: ETL_CRAFT_HEARTBEAT_SECONDS when set, else {DEFAULT_HEARTBEAT_SECONDS:g})",
    )
    parser.add_argument(
        "--log-port",
        type=ranges.LISTEN_PORT.argument(),
        default=LOG_PORT,
        metavar="N",
        help=f"with ETL_CRAFT_WORKER_TOKEN set, serve the running attempts' logs to other hosts "
        f"on this port (default {LOG_PORT}; 0: a free port)",
    )
    parser.add_argument(
        "--log-host",
        default="0.0.0.0",  # noqa: S104 (readers are on other hosts; the token guards it)
        metavar="HOST",
        help="the address the log endpoint listens on (default 0.0.0.0: every interface)",
    )
    parser.add_argument(
        "--log-address",
        metavar="URL",
        help="the endpoint's address as other hosts reach it (default http://<host name>:<port>)",
    )
    add_telemetry_options(parser, METRICS_PORT)


COMMAND = Command(
    name="worker",
    help="run the worker agent: claim queued attempts of a pool and run them",
    configure=configure,
    handler="etl_craft_worker.worker_command:handle",
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    COMMAND.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["worker"])
