"""Series a process observes as things happen, and serving /metrics from a long-running one.

Gauges of the shared tables (queues, live runs, workers) are read at scrape time by
``etl_craft.enginedb.gauges``; what is here is counted where it happens, in the process
that saw it: a dispatch, a lease that expired. A series only one service observes (an
admission, an attempt a worker ran) is defined in that service. Engine
DB statement latency is timed by ``etl_craft.enginedb.connection`` once a process serves it
(``time_engine_statements``). Counters start at zero when a process starts; Prometheus's
rate() and increase() read a restart as a reset.
"""

from __future__ import annotations

import logging
from wsgiref.simple_server import WSGIServer

from prometheus_client import Counter, Histogram, start_http_server

from etl_craft.enginedb.connection import observe_statements

log = logging.getLogger(__name__)
# Queue waits and admissions range from milliseconds (an idle pool) to hours (a full one).
WAIT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)

DISPATCH_SECONDS = Histogram(
    "etl_craft_dispatch_latency_seconds",
    "From an attempt being due (QUEUED_AT, or NOT_BEFORE of a delayed retry) to an owner "
    "taking it: the overseer's local pool (provider=local) or a worker's claim (provider=queue)",
    ["provider"],
    buckets=WAIT_BUCKETS,
)
STATEMENT_SECONDS = Histogram(
    "etl_craft_enginedb_statement_seconds",
    "Time from sending an Engine DB statement to its result, by statement name "
    "(unnamed: plus the SQL verb, for BEGIN, PRAGMA and scripts' statements)",
    ["statement"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
LEASE_EXPIRIES = Counter(
    "etl_craft_lease_expiries",
    "Attempts the reconciler settled after their owner stopped renewing the lease: LOST, or "
    "SUCCESS recovered from the warehouse ledger",
    ["outcome"],
)


def serve_metrics(host: str, port: int, what: str) -> WSGIServer | None:
    """Serve /metrics on ``host:port`` from a daemon thread; port 0 serves nothing.

    A port already taken is logged, not fatal: a second server that is about to be refused,
    or a standby, still says why it won't lead; the scrape's up series shows the gap.
    """
    if port == 0:
        return None
    time_engine_statements()
    try:
        server, _ = start_http_server(port, addr=host)
    except OSError as error:
        log.error(
            "%s serves no metrics: %s:%s is not available (%s); choose a free port with "
            "--metrics-port, or 0 to serve none",
            what,
            host,
            port,
            error.strerror or error,
        )
        return None
    log.info("%s serves Prometheus metrics on http://%s:%s/metrics", what, host, port)
    return server


def time_engine_statements() -> None:
    """Time this process's Engine DB statements in STATEMENT_SECONDS from now on."""
    observe_statements(STATEMENT_SECONDS)
