"""Wake-ups: LISTEN etl_craft_events on PostgreSQL, where every transition sends a NOTIFY.

A notification is a reason to read the tables again, never a message: loops wait for one, a
child's exit, a poll timeout or a stop, whichever comes first. SQLite has no NOTIFY, so loops
there poll.
"""

from __future__ import annotations

import contextlib
import json
import select
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from typing import Any

from etl_craft.enginedb.connection import EngineDB

Event = Mapping[str, Any]  # a transition's payload: {"type", "id", "status"} (transitions/_apply)
# What a task run or attempt reads as while queued, claimed or running.
_UNDER_WAY = frozenset({"QUEUED", "CLAIMED", "RUNNING", "IN-PROGRESS"})


def queued_attempt(event: Event) -> bool:
    """An attempt was queued: what a worker may claim."""
    return event.get("type") == "attempt" and event.get("status") == "QUEUED"


def of_runs(event: Event) -> bool:
    """Whether a notification concerns a run itself (created, admitted, ended, cancelled), or
    is not one of the transitions' (then it may concern anything)."""
    return event.get("type") not in ("attempt", "task run")


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
    """Wakes on transitions' NOTIFY on PostgreSQL; SQLite has none, so loops poll."""

    def __init__(self, engine: EngineDB) -> None:
        self.engine = engine
        self._stack = ExitStack()
        self._driver: Any = None

    def __enter__(self) -> Listener:
        if self.engine.dialect == "postgresql":
            conn = self._stack.enter_context(self.engine.session())
            conn.run("listen_events")
            self._driver = conn.connection.connection.driver_connection
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    def descriptor(self) -> int | None:
        return None if self._driver is None else int(self._driver.fileno())

    def drain(self, wanted: Callable[[Event], bool] | None = None) -> list[Event]:
        """Consume pending notifications; those ``wanted`` accepts (all without it)."""
        if self._driver is None:
            return []
        events = (_event(note.payload) for note in self._driver.notifies(timeout=0))
        return [event for event in events if wanted is None or wanted(event)]

    def pending(self) -> bool:
        """Whether notifications wait to be drained."""
        descriptor = self.descriptor()
        return descriptor is not None and bool(select.select([descriptor], [], [], 0)[0])

    def wait(self, timeout: float) -> None:
        descriptor = self.descriptor()
        if descriptor is None:
            return
        with contextlib.suppress(InterruptedError):
            select.select([descriptor], [], [], timeout)
