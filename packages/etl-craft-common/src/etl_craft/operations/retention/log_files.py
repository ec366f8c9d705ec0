"""Attempt log files on this host that retention removes: those of purged attempts, and every
attempt log older than Retention.attempt_log_days (its row keeps the log's tail)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from etl_craft.runtime.handover import outcome_path

LOG_SUFFIX = ".log"


class LogFiles:
    def __init__(self, folder: Path | None, older_than: datetime, *, dry_run: bool) -> None:
        self.folder, self.older_than, self.dry_run = folder, older_than.timestamp(), dry_run
        self.pending: list[Path] = []
        self.removed: set[Path] = set()

    def forget(self, paths: Iterable[str]) -> None:
        """The logs of attempts whose rows this transaction deletes: removed once it commits."""
        self.pending.extend(Path(path) for path in paths)

    def settle(self) -> None:
        """Remove the logs of the attempts just purged (the transaction committed)."""
        for path in self.pending:
            self._remove(path)
        self.pending.clear()

    def sweep(self) -> int:
        """Remove every attempt log under the folder older than the log retention; the number
        of log files removed in all (a dry run: that would be)."""
        if self.folder is not None and self.folder.is_dir():
            for path in sorted(self.folder.rglob(f"*{LOG_SUFFIX}")):
                if path.stat().st_mtime < self.older_than:
                    self._remove(path)
            if not self.dry_run:
                self._prune(self.folder)
        return len(self.removed)

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
