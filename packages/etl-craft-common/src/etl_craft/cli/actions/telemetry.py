"""The start-up of a long-running service's telemetry: /metrics and traces."""

from __future__ import annotations

import argparse

from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.gauges import register_engine_collector
from etl_craft.runtime.metrics import serve_metrics
from etl_craft.runtime.tracing import configure_tracing


def start_telemetry(
    args: argparse.Namespace, service: str, engine_series: EngineDB | None = None
) -> None:
    """Serve /metrics as the options say, with the Engine DB's series when ``engine_series``
    is given (one process per Engine DB), and trace as the OTEL_ variables say."""
    configure_tracing(service, inherit=False)
    if engine_series is not None and args.metrics_port:
        register_engine_collector(engine_series)
    serve_metrics(args.metrics_host, args.metrics_port, service)
