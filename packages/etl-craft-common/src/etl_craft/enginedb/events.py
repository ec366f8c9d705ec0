"""Wake-ups: LISTEN etl_craft_events on PostgreSQL, where every transition sends a NOTIFY.

A notification is a reason to read the tables again, never a message: loops wait for one, a
child's exit, a poll timeout or a stop, whichever comes first. SQLite has no NOTIFY, so loops
there poll. A listener that loses its connection (an Engine DB restart, a dropped connection)
listens again once the Engine DB is back, trying with backoff; loops poll meanwhile.
Payloads are parsed here, as they arrive, into frozen events: one class per kind of row.
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import psycopg
from sqlalchemy.exc import SQLAlchemyError

from etl_craft.core.enums import AttemptStatus, RunStatus, TaskRunStatus, WorkerStatus
from etl_craft.core.errors import EngineDBError
from etl_craft.enginedb.backoff import Backoff
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.transitions.table import Entity

log = logging.getLogger(__name__)
_FAILURES = (EngineDBError, SQLAlchemyError, psycopg.Error, OSError)


@dataclass(frozen=True)
class RunChanged:
    run_id: int
    status: RunStatus


@dataclass(frozen=True)
class TaskRunChanged:
    task_run_id: int
    status: TaskRunStatus


@dataclass(frozen=True)
class AttemptChanged:
    attempt_id: int
    status: AttemptStatus


@dataclass(frozen=True)
class WorkerChanged:
    worker_id: str
    status: WorkerStatus


@dataclass(frozen=True)
class WakeUp:
    """No transition's news: notifications may have been missed, or another sender's
    payload came; either way anything may have changed."""

    reason: str


Event = RunChanged | TaskRunChanged | AttemptChanged | WorkerChanged | WakeUp
MISSED = WakeUp("notifications may have been missed while the listener was away")

# A transition's payload is {"type": <Entity>, "id", "status"} (transitions/_apply.notify).
_KINDS: dict[str, Callable[[Any, str], Event]] = {
    Entity.RUN: lambda row_id, status: RunChanged(int(row_id), RunStatus(status)),
    Entity.TASK_RUN: lambda row_id, status: TaskRunChanged(int(row_id), TaskRunStatus(status)),
    Entity.ATTEMPT: lambda row_id, status: AttemptChanged(int(row_id), AttemptStatus(status)),
    Entity.WORKER: lambda row_id, status: WorkerChanged(str(row_id), WorkerStatus(status)),
}


def parse_event(payload: str) -> Event:
    """The event a transition's payload tells of; a plain wake-up for any other payload."""
    try:
        fields = json.loads(payload)
        return _KINDS[fields["type"]](fields["id"], fields["status"])
    except (ValueError, KeyError, TypeError):
        return WakeUp(f"a notification etl-craft does not send: {payload[:200]!r}")


def queued_attempt(event: Event) -> bool:
    """An attempt was queued: what a worker may claim."""
    return isinstance(event, AttemptChanged) and event.status is AttemptStatus.QUEUED


def changes_a_plan(event: Event) -> bool:
    """All but a task run or attempt being queued, claimed or started: those follow from a
    plan and never change one, so an overseer need not look at its runs again for them."""
    if isinstance(event, AttemptChanged | TaskRunChanged):
        return event.status.terminal
    return True


class Listener:
    """Wakes on transitions' NOTIFY on PostgreSQL; SQLite has none, so loops poll.

    Without a connection (lost, and not back yet) it has no descriptor, so loops poll; the
    first drain after a loss, and after it listens again, returns a plain wake-up (MISSED),
    since notifications may have been missed meanwhile.
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
                events = [parse_event(note.payload) for note in self._driver.notifies(timeout=0)]
            except _FAILURES as error:
                self._lost(error)
        if self._missed:
            self._missed = False
            events.insert(0, MISSED)
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
