"""What an owner does with an attempt's log as the attempt ends.

Its tail goes into TASK_LOG (Logs.tail_bytes); with a Logs store, the whole log is uploaded
there before the outcome is recorded (so a reader who sees the attempt ended finds it), again
once the task process is gone should it have written more, and the local copy is then
removed: the owner's host keeps no attempt logs. LOG_PATH names the stored log from the start
(runtime/launcher), so readers on any host know where to look.
"""

from __future__ import annotations

import logging
from pathlib import Path

from etl_craft.core.errors import ConfigurationError, NotFoundError
from etl_craft.runtime.logfile import tail
from etl_craft.stores import ObjectStore, StoreSettings, open_store

log = logging.getLogger(__name__)
LOGS_SETTING = "Logs.store"


class AttemptLogs:
    def __init__(self, tail_bytes: int, store: ObjectStore | None = None) -> None:
        self.tail_bytes, self.store = tail_bytes, store
        self._uploaded: dict[Path, int] = {}  # the size each log had when last uploaded

    @classmethod
    def configured(cls, tail_bytes: int, store: StoreSettings | None) -> AttemptLogs:
        return cls(tail_bytes, open_store(store, LOGS_SETTING) if store else None)

    def ending(self, path: Path, location: str | None) -> str | None:
        """The tail for TASK_LOG, the whole log uploaded first when there is a store."""
        found = tail(path, self.tail_bytes)
        self._upload(path, location)
        return found

    def ended(self, path: Path, location: str | None) -> None:
        """The task process is gone and its outcome recorded: upload what it wrote since, and
        remove the local copy once the store holds it."""
        if self.store is None or location is None:
            return
        if self._upload(path, location):
            path.unlink(missing_ok=True)
        self._uploaded.pop(path, None)

    def _upload(self, path: Path, location: str | None) -> bool:
        """Whether the store holds the log as it is now."""
        if self.store is None or location is None:
            return False
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return path in self._uploaded
        if self._uploaded.get(path) == size:
            return True
        key = location.removeprefix(f"{self.store.url}/")
        try:
            self.store.put_file(key, path)
        except (ConfigurationError, NotFoundError, OSError) as error:
            # The attempt's outcome matters more than its log: it is recorded all the same,
            # and the log stays on this host, where the next end of an attempt tries again.
            log.error("the attempt log %s was not uploaded to %s: %s", path, location, error)
            return False
        self._uploaded[path] = size
        return True
