"""The overseer's own clone schedule: a clone every Cloning.every_minutes, never inside a run.

Like the daily purge, it runs in a thread of its own while the overseer leads, so that a long
clone never holds up the passes that drive runs; a turn that comes while the last clone still
runs is not started (requests coalesce), and a clone that waits past Cloning.lock_wait_seconds
for one by hand skips its turn. A failed clone is logged; the next turn carries on from the
watermarks the failed one committed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from etl_craft.core.errors import EtlCraftError
from etl_craft.operations.cloning.clone import CloneView

log = logging.getLogger(__name__)


@dataclass
class ScheduledClone:
    every_seconds: float
    run_clone: Callable[[], CloneView]
    next_at: float | None = None  # monotonic; None: the first turn is due at once
    thread: threading.Thread | None = field(default=None, repr=False)

    def due(self, now: float) -> bool:
        running = self.thread is not None and self.thread.is_alive()
        return not running and (self.next_at is None or now >= self.next_at)

    def start_if_due(self, now: float) -> bool:
        """Start a clone when its turn has come and none runs; ``now`` is monotonic."""
        if not self.due(now):
            return False
        self.next_at = now + self.every_seconds
        self.thread = threading.Thread(target=self._clone, name="clone", daemon=True)
        self.thread.start()
        return True

    def join(self, timeout: float | None = None) -> None:
        if self.thread is not None:
            self.thread.join(timeout)

    def _clone(self) -> None:
        try:
            view = self.run_clone()
        except EtlCraftError as error:
            log.error("the scheduled clone stopped: %s", error)
            return
        if view.skipped:
            log.warning(
                "the scheduled clone skipped its turn: another clone into %s held the clone "
                "lock past Cloning.lock_wait_seconds",
                view.mirror_schema,
            )
            return
        log.info(
            "clone into %s: %s row(s) copied, %s deleted",
            view.mirror_schema,
            view.copied,
            view.deleted,
        )
