"""The Engine DB's changes as they happen, for what shows them live: one LISTEN per process.

A feed follows the transitions' NOTIFY in a thread of its own and hands each change to one
callback, which fans it out (the web UI's event streams). A change names the row and its new
status; like every notification it is a reason to read the tables again, never their state.
"Wake-up" says notifications may have been missed (the connection was lost and is back), so
anything may have changed. SQLite has no NOTIFY: there is no feed, and pages poll.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.exc import SQLAlchemyError

from etl_craft.core.errors import EngineDBError
from etl_craft.enginedb.backoff import Backoff
from etl_craft.enginedb.events import (
    AttemptChanged,
    Event,
    Listener,
    RunChanged,
    TaskRunChanged,
    WorkerChanged,
)
from etl_craft.operations.context import OperationContext

log = logging.getLogger(__name__)
# While the listening connection is lost, how often the feed looks whether it may try again
# (the Listener's backoff decides when it does).
LOST_LOOK_SECONDS = 0.5
# A connection dropped without a word (no FIN reached us) never wakes a select: look this often.
QUIET_LOOK_SECONDS = 10.0
WAKE_UP = "wake-up"


@dataclass(frozen=True)
class Change:
    kind: str  # run, task-run, attempt, worker, or wake-up
    row_id: int | str | None = None
    status: str | None = None


def change_of(event: Event) -> Change:
    match event:
        case RunChanged():
            return Change("run", event.run_id, event.status.value)
        case TaskRunChanged():
            return Change("task-run", event.task_run_id, event.status.value)
        case AttemptChanged():
            return Change("attempt", event.attempt_id, event.status.value)
        case WorkerChanged():
            return Change("worker", event.worker_id, event.status.value)
    return Change(WAKE_UP)


def pushes_changes(ctx: OperationContext) -> bool:
    """Whether the Engine DB tells of its changes (PostgreSQL's NOTIFY), or must be polled."""
    return ctx.engine.dialect == "postgresql"


class ChangeFeed:
    """Calls ``deliver`` from its own thread with each change, from ``start`` until ``stop``."""

    def __init__(self, ctx: OperationContext, deliver: Callable[[Change], None]) -> None:
        self._ctx = ctx
        self._deliver = deliver
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()
        self._listening = threading.Event()
        self._stopping = threading.Event()
        self._wake, self._waker = os.pipe()

    def start(self, timeout: float) -> bool:
        """Start following, once; whether it listens within ``timeout`` seconds (if not, it
        keeps trying, and tells a wake-up once it listens)."""
        with self._guard:
            if self._thread is None and not self._stopping.is_set():
                self._thread = threading.Thread(
                    target=self._run, name="etl-craft change feed", daemon=True
                )
                self._thread.start()
        return self._listening.wait(timeout)

    def stop(self) -> None:
        with self._guard:
            if self._stopping.is_set():
                return
            self._stopping.set()
            os.write(self._waker, b"x")
            thread = self._thread
        if thread is not None:
            thread.join()
        for descriptor in (self._wake, self._waker):
            with contextlib.suppress(OSError):
                os.close(descriptor)

    def _run(self) -> None:
        backoff = Backoff()
        while not self._stopping.is_set():
            try:
                with Listener(self._ctx.engine) as listener:
                    self._listening.set()
                    if backoff.succeeded():  # changes went untold while it could not listen
                        self._deliver(Change(WAKE_UP))
                    self._follow(listener)
            except (EngineDBError, SQLAlchemyError, OSError) as error:
                delay = backoff.failed()
                log.warning(
                    "cannot listen for the Engine DB's changes (%s); trying again in %.1fs, "
                    "and live pages wait for their next poll meanwhile",
                    error,
                    delay,
                )
                self._wait_for_stop(delay)

    def _follow(self, listener: Listener) -> None:
        while not self._stopping.is_set():
            descriptor = listener.descriptor()
            if descriptor is None:
                self._wait_for_stop(LOST_LOOK_SECONDS)
            else:
                with contextlib.suppress(InterruptedError):
                    select.select([descriptor, self._wake], [], [], QUIET_LOOK_SECONDS)
            for event in listener.drain():
                self._deliver(change_of(event))

    def _wait_for_stop(self, seconds: float) -> None:
        with contextlib.suppress(InterruptedError):
            select.select([self._wake], [], [], seconds)
