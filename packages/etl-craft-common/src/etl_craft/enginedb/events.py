"""Wake-ups: LISTEN etl_craft_events on PostgreSQL, where every transition sends a NOTIFY.

A notification is a reason to read the tables again, never a message: loops wait for one, a
child's exit, a poll timeout or a stop, whichever comes first. SQLite has no NOTIFY, so loops
there poll. A listener that loses its connection (an Engine DB restart, a dropped connection)
listens again once the Engine DB is back, trying with backoff; loops poll meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from typing import Any

import psycopg
from sqlalchemy.exc import SQLAlchemyError

from etl_craft.core.errors import EngineDBError
from etl_craft.enginedb.backoff import Backoff
from etl_craft.enginedb.connection import EngineDB

log = logging.getLogger(__name__)
_FAILURES = (EngineDBError, SQLAlchemyError, psycopg.Error, OSError)

Event = Mapping[str, Any]  # a transition's payload: {"type", "id", "status"} (transitions/_apply)
# What a task run or attempt reads as while queued, claimed or running.
_UNDER_WAY = frozenset({"QUEUED", "CLAIMED", "RUNNING", "IN-PROGRESS"})


def queued_attempt(event: Event) -> bool:
    """An attempt was queued: what a worker may claim."""
    return event.get("type") == "attempt" and event.get("status") == "QUEUED"


def changes_a_plan(event: Event) -> bool:
    """All but a task run or attempt being queued, claimed or started: those follow from a
    plan and never change one, so an overseer need not look at its runs again for them."""
    return not (event.get("type") in ("attempt", "task run") and event.get("status") in _UNDER_WAY)


def _event(payload: str) -> Event:
    try:
        parsed = json.loads(payload)
    except ValueError:
        return {}  # not one of ours: a plain wake-up
    return parsed if isinstance(parsed, dict) else {}


class Listener:
    """Wakes on transitions' NOTIFY on PostgreSQL; SQLite has none, so loops poll.

    Without a connection (lost, and not back yet) it has no descriptor, so loops poll; the
    first drain after a loss, and after it listens again, returns a plain wake-up ({}), since
    notifications may have been missed meanwhile.
    """

    def __init__(self, engine: EngineDB) -> None:
        self.engine = engine
        self._stack = ExitStack()
        self._driver: Any = None
        self._backoff = Backoff()
        self._retry_at = 0.0
        self._missed = False

    def __enter__(self) -> Listener:
        if self.engine.dialect == "postgresql":
            self._listen()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._close()

    def _listen(self) -> None:
        conn = self._stack.enter_context(self.engine.session())
        conn.run("listen_events")
        self._driver = conn.connection.connection.driver_connection

    def _close(self) -> None:
        self._driver = None
        with contextlib.suppress(*_FAILURES):
            self._stack.close()
        self._stack = ExitStack()

    def _lost(self, error: BaseException) -> None:
        if self._driver is not None:
            log.warning(
                "lost the Engine DB connection that listens for events (%s); "
                "polling until it is back",
                error,
            )
        self._close()
        self._missed = True
        self._retry_at = time.monotonic() + self._backoff.failed()

    def _reconnect(self) -> None:
        if self._driver is not None or self.engine.dialect != "postgresql":
            return
        if time.monotonic() < self._retry_at:
            return
        try:
            self._listen()
        except _FAILURES as error:
            self._lost(error)
            return
        self._backoff.succeeded()
        self._missed = True
        log.info("listening for Engine DB events again")

    def descriptor(self) -> int | None:
        self._reconnect()
        return None if self._driver is None else int(self._driver.fileno())

    def drain(self, wanted: Callable[[Event], bool] | None = None) -> list[Event]:
        """Consume pending notifications; those ``wanted`` accepts (all without it)."""
        events: list[Event] = []
        if self._driver is not None:
            try:
                events = [_event(note.payload) for note in self._driver.notifies(timeout=0)]
            except _FAILURES as error:
                self._lost(error)
        if self._missed:
            self._missed = False
            events.insert(0, {})
        return [event for event in events if wanted is None or wanted(event)]

    def pending(self) -> bool:
        """Whether notifications wait to be drained (or a lost connection to be noticed)."""
        if self._missed:
            return True
        descriptor = self.descriptor()
        return descriptor is not None and bool(select.select([descriptor], [], [], 0)[0])

    def wait(self, timeout: float) -> None:
        descriptor = self.descriptor()
        if descriptor is None:
            return
        with contextlib.suppress(InterruptedError):
            select.select([descriptor], [], [], timeout)
