"""The options of a long-running service's telemetry, /metrics and traces; started by
cli/actions/telemetry once the service's command runs."""

from __future__ import annotations

import argparse

from etl_craft.core import ranges
from etl_craft.core.defaults import METRICS_HOST


def add_telemetry_options(parser: argparse.ArgumentParser, default_port: int) -> None:
    parser.add_argument(
        "--metrics-port",
        type=ranges.LISTEN_PORT.argument(),
        default=default_port,
        metavar="N",
        help=f"serve Prometheus metrics on this port at /metrics (default {default_port}; "
        "0 serves none)",
    )
    parser.add_argument(
        "--metrics-host",
        default=METRICS_HOST,
        metavar="HOST",
        help=f"the address /metrics listens on (default {METRICS_HOST}; 0.0.0.0 for every "
        "interface)",
    )
