"""The overseer's own Prometheus series: what it counts as it admits and drives runs."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from etl_craft.runtime.metrics import WAIT_BUCKETS

RUNS_ENDED = Counter(
    "etl_craft_runs_ended",
    "Runs this overseer drove to a terminal status, by project and status",
    ["project", "status"],
)
ADMISSION_SECONDS = Histogram(
    "etl_craft_admission_latency_seconds",
    "From a run's QUEUED_AT to its pipeline gate's decision, by decision (admitted, skipped)",
    ["decision"],
    buckets=WAIT_BUCKETS,
)
PIPELINE_BLOCKING_FINDINGS = Gauge(
    "etl_craft_pipeline_blocking_findings",
    "Findings that keep a pipeline from running (a cycle, an inactive upstream, an unusable "
    "schedule, an invalid parameter value), by project and pipeline; absent when it has none",
    ["project", "pipeline"],
)
OVERSEER_LEADING = Gauge(
    "etl_craft_overseer_leading", "1 while this overseer holds the leadership lock, else 0"
)
