"""Engine DB series computed when Prometheus scrapes: runs, queues, gate waits, workers.

The tables are the truth every process shares, so these gauges are read from them, not
counted in one process: a scrape runs five small named statements in one read transaction,
each served by a partial or leading-status index (live runs, live attempts, open gate
waits, workers not gone). Every project and pool appears with zeros, so a series doesn't
vanish when its queue empties. Register the collector in one process per Engine DB (the
overseer does); others would export the same numbers again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from datetime import datetime

from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from etl_craft.core.enums import AttemptStatus, RunStatus, SlotKind, WorkerStatus
from etl_craft.core.errors import EngineDBError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, EngineDB, Row
from etl_craft.enginedb.overseers import active_overseer

log = logging.getLogger(__name__)
LIVE_RUNS = (RunStatus.QUEUED, RunStatus.IN_PROGRESS)
LIVE_ATTEMPTS = (AttemptStatus.QUEUED, AttemptStatus.CLAIMED, AttemptStatus.RUNNING)
GATE_LEVELS = ("pipeline", "task")
WORKING = (WorkerStatus.ACTIVE.value, WorkerStatus.DRAINING.value)


def _gauge(name: str, documentation: str, *labels: str) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, labels=list(labels))


class Families:
    """The gauge families of one scrape, filled from the rows of its statements."""

    def __init__(self) -> None:
        self.runs = _gauge(
            "etl_craft_runs", "Runs QUEUED or IN-PROGRESS, by project", "project", "status"
        )
        self.over_sla = _gauge(
            "etl_craft_runs_over_sla",
            "IN-PROGRESS runs that started longer ago than their pipeline's SLA_MINUTES",
            "project",
        )
        self.attempts = _gauge(
            "etl_craft_attempts",
            "Live attempts (QUEUED, CLAIMED, RUNNING) by pool, slot kind and status; QUEUED "
            "counts retries still waiting for their delay",
            "pool",
            "slot_kind",
            "status",
        )
        self.depth = _gauge(
            "etl_craft_queue_depth",
            "QUEUED attempts that are due (no retry delay left): what an owner may claim now",
            "pool",
            "slot_kind",
        )
        self.oldest = _gauge(
            "etl_craft_queue_oldest_age_seconds",
            "How long the longest-waiting due QUEUED attempt has been due; 0 for an empty queue",
            "pool",
            "slot_kind",
        )
        self.retries = _gauge(
            "etl_craft_retries_queued",
            "QUEUED attempts that are retries (ATTEMPT_NUMBER above 1), due or not",
            "pool",
            "slot_kind",
        )
        self.gate_waits = _gauge(
            "etl_craft_gate_waits",
            "Open gate waits (AUD_GATE_WAITS not resolved), by gate level",
            "level",
        )
        self.gate_oldest = _gauge(
            "etl_craft_gate_wait_oldest_age_seconds",
            "How long the oldest open gate wait has waited; 0 when none waits",
            "level",
        )
        self.workers = _gauge(
            "etl_craft_workers",
            "Worker agents that are not GONE, by pool and status (ACTIVE, DRAINING)",
            "pool",
            "status",
        )
        self.worker_slots = _gauge(
            "etl_craft_worker_slots",
            "Slots of ACTIVE workers, by pool and slot kind",
            "pool",
            "slot_kind",
        )
        self.overseer_age = _gauge(
            "etl_craft_overseer_heartbeat_age_seconds",
            "Seconds since the leading overseer's last heartbeat; absent when none runs",
        )

    def all(self) -> Iterator[Metric]:
        yield from vars(self).values()


class EngineDBCollector(Collector):
    def __init__(self, engine: EngineDB) -> None:
        self.engine = engine

    def describe(self) -> Iterable[Metric]:
        # Described without a query, so registering the collector touches no database.
        yield from Families().all()
        yield _up(0)

    def collect(self) -> Iterable[Metric]:
        families = Families()
        try:
            with self.engine.read() as conn:
                _fill(conn, families)
        except EngineDBError as error:
            log.warning("the metrics scrape could not read the Engine DB: %s", error)
            yield _up(0)
            return
        yield from families.all()
        yield _up(1)


def register_engine_collector(
    engine: EngineDB, registry: CollectorRegistry = REGISTRY
) -> EngineDBCollector:
    collector = EngineDBCollector(engine)
    registry.register(collector)
    return collector


def _up(value: int) -> GaugeMetricFamily:
    return GaugeMetricFamily(
        "etl_craft_enginedb_up", "1 when the last scrape read the Engine DB, else 0", value=value
    )


def _fill(conn: EngineConnection, families: Families) -> None:
    now = as_utc(conn.scalar("metrics_clock"))
    assert now is not None
    _fill_runs(conn.all("metrics_runs"), families)
    attempts = conn.all("metrics_attempts")
    _fill_attempts(attempts, now, families)
    _fill_gate_waits(conn.all("metrics_gate_waits"), now, families)
    pools = {str(row["pool"]) for row in attempts}
    _fill_workers(conn.all("metrics_workers"), pools, families)
    overseer = active_overseer(conn)
    if overseer is not None and overseer.heartbeat_at is not None:
        families.overseer_age.add_metric([], _age(now, overseer.heartbeat_at))


def _fill_runs(rows: list[Row], families: Families) -> None:
    runs: dict[tuple[str, str], int] = {}
    over: dict[str, int] = {}
    for row in rows:
        project = str(row["project"])
        for status in LIVE_RUNS:
            runs.setdefault((project, status.value), 0)
        over[project] = over.get(project, 0) + int(row["over_sla"])
        if row["status"] is not None:
            runs[(project, str(row["status"]))] = int(row["runs"])
    for labels, value in sorted(runs.items()):
        families.runs.add_metric(list(labels), value)
    for project, value in sorted(over.items()):
        families.over_sla.add_metric([project], value)


def _fill_attempts(rows: list[Row], now: datetime, families: Families) -> None:
    pools = sorted({str(row["pool"]) for row in rows})
    attempts = {(p, k.value, s.value): 0 for p in pools for k in SlotKind for s in LIVE_ATTEMPTS}
    queues = {(pool, kind.value): [0, 0, 0.0] for pool in pools for kind in SlotKind}
    for row in rows:
        if row["status"] is None:
            continue
        key = (str(row["pool"]), str(row["slot_kind"]))
        attempts[(*key, str(row["status"]))] = int(row["attempts"])
        if row["status"] == AttemptStatus.QUEUED.value:
            oldest = as_utc(row["oldest_due"])
            queues[key] = [int(row["due"]), int(row["retries"]), _age(now, oldest)]
    for (pool, kind, status), value in sorted(attempts.items()):
        families.attempts.add_metric([pool, kind, status], value)
    for (pool, kind), (due, retries, age) in sorted(queues.items()):
        families.depth.add_metric([pool, kind], due)
        families.retries.add_metric([pool, kind], retries)
        families.oldest.add_metric([pool, kind], age)


def _fill_gate_waits(rows: list[Row], now: datetime, families: Families) -> None:
    found = {str(row["level"]): row for row in rows}
    for level in GATE_LEVELS:
        row = found.get(level)
        families.gate_waits.add_metric([level], 0 if row is None else int(row["waits"]))
        oldest = None if row is None else as_utc(row["oldest"])
        families.gate_oldest.add_metric([level], _age(now, oldest))


def _fill_workers(rows: list[Row], pools: set[str], families: Families) -> None:
    pools |= {str(row["pool"]) for row in rows}
    workers = {(pool, status): 0 for pool in pools for status in WORKING}
    slots = {(pool, kind.value): 0 for pool in pools for kind in SlotKind}
    for row in rows:
        pool, status = str(row["pool"]), str(row["status"])
        workers[(pool, status)] = int(row["workers"])
        if status == WorkerStatus.ACTIVE.value:
            for kind in SlotKind:
                slots[(pool, kind.value)] = int(row[f"{kind.value}_slots"])
    for labels, value in sorted(workers.items()):
        families.workers.add_metric(list(labels), value)
    for labels, value in sorted(slots.items()):
        families.worker_slots.add_metric(list(labels), value)


def _age(now: datetime, then: datetime | None) -> float:
    return 0.0 if then is None else max(0.0, (now - then).total_seconds())
