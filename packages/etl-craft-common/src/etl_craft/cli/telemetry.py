"""The options and start-up of a long-running service's telemetry: /metrics and traces."""

from __future__ import annotations

import argparse

from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.metrics import register_engine_collector
from etl_craft.runtime.metrics import DEFAULT_HOST, serve_metrics
from etl_craft.runtime.tracing import configure_tracing


def add_telemetry_options(parser: argparse.ArgumentParser, default_port: int) -> None:
    parser.add_argument(
        "--metrics-port",
        type=_port,
        default=default_port,
        metavar="N",
        help=f"serve Prometheus metrics on this port at /metrics (default {default_port}; "
        "0 serves none)",
    )
    parser.add_argument(
        "--metrics-host",
        default=DEFAULT_HOST,
        metavar="HOST",
        help=f"the address /metrics listens on (default {DEFAULT_HOST}; 0.0.0.0 for every "
        "interface)",
    )


def start_telemetry(
    args: argparse.Namespace, service: str, engine_series: EngineDB | None = None
) -> None:
    """Serve /metrics as the options say, with the Engine DB's series when ``engine_series``
    is given (one process per Engine DB), and trace as the OTEL_ variables say."""
    configure_tracing(service, inherit=False)
    if engine_series is not None and args.metrics_port:
        register_engine_collector(engine_series)
    serve_metrics(args.metrics_host, args.metrics_port, service)


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a TCP port; expected 0 to 65535")
    return value
