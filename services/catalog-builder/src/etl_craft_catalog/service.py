"""The catalog-builder service: build on start, rebuild on the Docs_site schedule, keep serving.

A rebuild writes a whole new release beside the served one (etl_craft_catalog.releases), so a
failing rebuild leaves the previous site served; it is logged and counted, and the next tick
tries again. The loop waits for the next tick or a stop, whichever comes first.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from prometheus_client import Counter, Gauge

from etl_craft.core.cron import CronExpression, next_after
from etl_craft.core.time import utc_now

log = logging.getLogger(__name__)

BUILDS = Counter(
    "etl_craft_catalog_builds",
    "Catalog builds this service ran, by outcome (success, failure); a failure keeps the "
    "previous site served",
    ["outcome"],
)
LAST_SUCCESS = Gauge(
    "etl_craft_catalog_last_success_timestamp_seconds",
    "When the catalog site served now was built (Unix time); 0 before the first success",
)

Rebuild = Callable[[], None]
# Waits up to the given seconds; True when asked to stop meanwhile.
Wait = Callable[[float], bool]


@dataclass
class CatalogService:
    rebuild: Rebuild
    schedule: str
    timezone: str
    stop: threading.Event = field(default_factory=threading.Event)
    clock: Callable[[], datetime] = utc_now
    wait: Wait | None = None

    def __post_init__(self) -> None:
        self._cron = CronExpression.parse(self.schedule)

    def build_once(self) -> bool:
        try:
            self.rebuild()
        except Exception:
            BUILDS.labels(outcome="failure").inc()
            log.exception(
                "the catalog rebuild failed; the previous site stays served, and the next "
                "tick of %s tries again",
                self.schedule,
            )
            return False
        BUILDS.labels(outcome="success").inc()
        LAST_SUCCESS.set(self.clock().timestamp())
        log.info("the catalog was rebuilt; the next rebuild is at %s", self.next_tick())
        return True

    def next_tick(self) -> datetime:
        return next_after(self._cron, self.clock(), self.timezone)

    def run(self) -> None:
        """Build now, then at every tick, until ``stop``."""
        self.build_once()
        tick = self.next_tick()
        while self._wait_until(tick):
            self.build_once()
            tick = next_after(self._cron, max(self.clock(), tick), self.timezone)

    def _wait_until(self, tick: datetime) -> bool:
        """False when asked to stop first. A wait that ends early waits again, so that a tick
        is built once."""
        wait = self.wait or self.stop.wait
        while (remaining := (tick - self.clock()).total_seconds()) > 0:
            if wait(remaining) or self.stop.is_set():
                return False
        return not self.stop.is_set()
