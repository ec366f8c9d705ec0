"""The worker agent's own Prometheus series: the attempts it claims and runs."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

WORKER_CLAIMS = Counter(
    "etl_craft_worker_claims", "Attempts this worker claimed from its pool", ["pool", "slot_kind"]
)
WORKER_RUNNING = Gauge(
    "etl_craft_worker_attempts_running",
    "Attempts whose task process this worker runs now, by slot kind",
    ["pool", "slot_kind"],
)
WORKER_ENDED = Counter(
    "etl_craft_worker_attempts_ended",
    "Attempts of this worker that reached a terminal status, by status",
    ["pool", "status"],
)
