"""Wake-ups: LISTEN etl_craft_events on PostgreSQL, where every transition sends a NOTIFY.

A notification is a reason to read the tables again, never a message: loops wait for one, a
child's exit, a poll timeout or a stop, whichever comes first. SQLite has no NOTIFY, so loops
there poll.
"""

from __future__ import annotations

import contextlib
import select
from contextlib import ExitStack
from typing import Any

from etl_craft.enginedb.connection import EngineDB


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

    def drain(self) -> int:
        """Consume pending notifications; how many there were."""
        if self._driver is None:
            return 0
        return sum(1 for _ in self._driver.notifies(timeout=0))

    def wait(self, timeout: float) -> None:
        descriptor = self.descriptor()
        if descriptor is None:
            return
        with contextlib.suppress(InterruptedError):
            select.select([descriptor], [], [], timeout)
