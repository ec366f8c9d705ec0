"""Attempt logs that retention removes: those of purged attempts, on this host or in the Logs
store, and every attempt log file on this host older than Retention.attempt_log_days (its row
keeps the log's tail)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from etl_craft.operations.logs.sources import is_stored
from etl_craft.runtime.handover import outcome_path
from etl_craft.stores import ObjectStore

log = logging.getLogger(__name__)

LOG_SUFFIX = ".log"


class LogFiles:
    def __init__(
        self,
        folder: Path | None,
        older_than: datetime,
        *,
        dry_run: bool,
        store: ObjectStore | None = None,
    ) -> None:
        self.folder, self.older_than, self.dry_run = folder, older_than.timestamp(), dry_run
        self.store = store
        self.pending: list[str] = []
        self.removed: set[Path] = set()
        self.removed_stored: set[str] = set()

    def forget(self, locations: Iterable[str]) -> None:
        """The logs of attempts whose rows this transaction deletes: removed once it commits."""
        self.pending.extend(locations)

    def settle(self) -> None:
        """Remove the logs of the attempts just purged (the transaction committed)."""
        for location in self.pending:
            if is_stored(location):
                self._remove_stored(location)
            else:
                self._remove(Path(location))
        self.pending.clear()

    def _remove_stored(self, location: str) -> None:
        prefix = f"{self.store.url}/" if self.store is not None else None
        if self.store is None or prefix is None or not location.startswith(prefix):
            # Another store than this process's: its rows are gone, the object stays.
            log.warning(
                "the stored log %s of a purged attempt is not in this process's Logs store "
                "(%s); remove it there",
                location,
                self.store.url if self.store else "none is set",
            )
            return
        key = location[len(prefix) :]
        if not self.store.exists(key):
            return
        self.removed_stored.add(location)
        if not self.dry_run:
            self.store.delete(key)

    def sweep(self) -> int:
        """Remove every attempt log under the folder older than the log retention; the number
        of log files removed in all (a dry run: that would be)."""
        if self.folder is not None and self.folder.is_dir():
            for path in sorted(self.folder.rglob(f"*{LOG_SUFFIX}")):
                if path.stat().st_mtime < self.older_than:
                    self._remove(path)
            if not self.dry_run:
                self._prune(self.folder)
        return len(self.removed) + len(self.removed_stored)

    def _remove(self, path: Path) -> None:
        if path in self.removed or not path.is_file():
            return
        self.removed.add(path)
        if not self.dry_run:
            path.unlink(missing_ok=True)
            outcome_path(path).unlink(missing_ok=True)

    def _prune(self, folder: Path) -> None:
        # Deepest first, so a run's folder goes before its pipeline's; the root stays.
        for root, _, _ in sorted(os.walk(folder), key=lambda entry: -len(entry[0])):
            if Path(root) != folder:
                with contextlib.suppress(OSError):
                    Path(root).rmdir()  # only an empty folder goes
