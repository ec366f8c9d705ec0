"""Where an attempt's log is read from: a file on this host, or the Logs store.

An attempt whose owner has a Logs store names the stored log in LOG_PATH from the start: while
it runs, its owner writes the log on its own host; once it ended, the store holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from etl_craft.core.errors import ConfigurationError
from etl_craft.stores import ObjectStore


class LogSource(Protocol):
    @property
    def where(self) -> str:
        """The file or the stored object's location, for people reading the log."""

    def size(self) -> int: ...

    def read(self, start: int, end: int) -> bytes: ...


@dataclass(frozen=True)
class LocalLog:
    path: Path

    @property
    def where(self) -> str:
        return str(self.path)

    def size(self) -> int:
        return self.path.stat().st_size

    def read(self, start: int, end: int) -> bytes:
        with self.path.open("rb") as log:
            log.seek(start)
            return log.read(max(0, end - start))


@dataclass
class StoredLog:
    """An ended attempt's log: it no longer changes, so it is fetched once."""

    store: ObjectStore
    key: str
    _data: bytes | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        return f"{self.store.url}/{self.key}"

    def size(self) -> int:
        return len(self._fetched())

    def read(self, start: int, end: int) -> bytes:
        return self._fetched()[start:end]

    def _fetched(self) -> bytes:
        if self._data is None:
            self._data = self.store.get(self.key)
        return self._data


def is_stored(location: str) -> bool:
    return "://" in location


def stored_key(location: str, store: ObjectStore | None, attempt_id: int) -> str:
    """The key of a stored log in this process's Logs store; refused when the log is in a
    store this process is not configured with."""
    prefix = f"{store.url}/" if store is not None else None
    if prefix is None or not location.startswith(prefix):
        configured = f"is {store.url}" if store is not None else "is not set"
        raise ConfigurationError(
            f"the log of attempt {attempt_id} is in the store {_store_of(location)}, and this "
            f"process's Logs.store {configured}; set Logs.store in craft-connector.yml (or "
            f"ETL_CRAFT_LOGS_STORE) to {_store_of(location)}"
        )
    return location[len(prefix) :]


def _store_of(location: str) -> str:
    scheme, _, rest = location.partition("://")
    head, _, _ = rest.partition("/logs/")
    return f"{scheme}://{head}"
