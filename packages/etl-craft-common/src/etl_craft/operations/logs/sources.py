"""Where an attempt's log is read from: a file on this host, or the Logs store.

An attempt whose owner has a Logs store names the stored log in LOG_PATH from the start: while
it runs, its owner writes the log on its own host; once it ended, the store holds it.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Protocol

from etl_craft.core.errors import ConfigurationError, NotFoundError
from etl_craft.stores import ObjectStore

SIZE_HEADER = "X-Log-Size"  # the worker's answer: the log's whole size


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


@dataclass
class WorkerLog:
    """A running attempt's log, read from the worker that runs it (its log endpoint)."""

    endpoint: str
    attempt_id: int
    token: str = field(repr=False)
    timeout: float = 10.0

    @property
    def where(self) -> str:
        return f"{self.endpoint}/attempts/{self.attempt_id}/log"

    def size(self) -> int:
        return self._get(0, 0)[0]

    def read(self, start: int, end: int) -> bytes:
        return self._get(start, end)[1]

    def _get(self, start: int, end: int) -> tuple[int, bytes]:
        request = urllib.request.Request(  # noqa: S310 (the worker's own http(s) endpoint)
            f"{self.where}?start={start}&end={end}",
            headers={"Authorization": f"Bearer {self.token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:  # noqa: S310
                return int(answer.headers[SIZE_HEADER]), bytes(answer.read())
        except urllib.error.HTTPError as error:
            if error.code == HTTPStatus.NOT_FOUND:
                # These messages reach the API's and the UI's viewers: no internal address.
                raise NotFoundError(
                    f"the worker no longer runs attempt {self.attempt_id}: it ended; read its "
                    "log again, from the Logs store"
                ) from None
            raise ConfigurationError(
                f"the worker at {self.endpoint} refused to serve the log of attempt "
                f"{self.attempt_id} ({error.code}); expected ETL_CRAFT_WORKER_TOKEN to be the "
                "workers' token: set it to the same value here"
            ) from None
        except OSError as error:
            raise NotFoundError(
                f"the worker that runs attempt {self.attempt_id} did not answer "
                f"({type(error).__name__}); its log is uploaded to the Logs store when the "
                "attempt ends"
            ) from None


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
