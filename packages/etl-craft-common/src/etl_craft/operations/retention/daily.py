"""The overseer's daily purge: once a day at Retention.daily_at in the project's time zone.

It runs in a thread of its own, so that a purge of a year's history never holds up the
passes that drive runs; its batches are short transactions beside theirs. An overseer that
starts after the day's slot purges once at once: every batch a purge committed stays done, so
a purge interrupted by a restart carries on where it stopped, and one with nothing left to
delete deletes nothing.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from etl_craft.config.sections import Retention
from etl_craft.core.actor import Actor
from etl_craft.core.errors import EtlCraftError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.retention.purge import PurgeRequest, purge
from etl_craft.stores import ObjectStore

log = logging.getLogger(__name__)


@dataclass
class DailyPurge:
    retention: Retention
    zone: ZoneInfo
    logs_dir: Path | None
    log_store: ObjectStore | None = None
    # The last slot a purge was started for; None until the first one this process starts.
    done_slot: datetime | None = None
    thread: threading.Thread | None = field(default=None, repr=False)

    def slot(self, now: datetime) -> datetime:
        """Today's purge time (in the project's time zone) as of ``now``."""
        local = now.astimezone(self.zone)
        return datetime.combine(local.date(), self.retention.daily_at, tzinfo=self.zone)

    def due(self, now: datetime) -> bool:
        slot = self.slot(now)
        running = self.thread is not None and self.thread.is_alive()
        return now >= slot and slot != self.done_slot and not running

    def start_if_due(self, engine: EngineDB, actor: Actor, now: datetime) -> bool:
        """Start today's purge on ``engine`` when its time has come and it has not started."""
        if not self.due(now):
            return False
        self.done_slot = self.slot(now)
        request = PurgeRequest(self.retention, now)
        self.thread = threading.Thread(
            target=self._purge, args=(engine, actor, request), name="daily-purge", daemon=True
        )
        self.thread.start()
        return True

    def join(self, timeout: float | None = None) -> None:
        if self.thread is not None:
            self.thread.join(timeout)

    def _purge(self, engine: EngineDB, actor: Actor, request: PurgeRequest) -> None:
        try:
            view = purge(engine, actor, request, self.logs_dir, log_store=self.log_store)
        except EtlCraftError as error:
            # The next day's slot tries again; what committed so far stays purged.
            log.error("the daily purge stopped: %s", error)
            return
        log.info(
            "daily purge: %s row(s) and %s attempt log file(s) past their retention deleted",
            view.total_rows,
            view.log_files,
        )
