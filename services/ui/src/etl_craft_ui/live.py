"""Live by push: the process's one change feed, fanned out to every open event stream.

The feed (one LISTEN) starts with the first stream and stops with the app. Each stream has a
bounded queue of its own: a client that reads slowly loses its oldest changes, never holds up
the others, and loses nothing it needs, since any change makes a page read the tables again.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from etl_craft.operations.changes import Change, ChangeFeed, pushes_changes
from etl_craft.operations.context import OperationContext

QUEUE_SIZE = 100
LISTENING_SECONDS = 5.0  # a stream opens after this even if the feed does not listen yet

# None ends a stream: the server is stopping.
Changes = asyncio.Queue[Change | None]


class Broadcaster:
    def __init__(self, ctx: OperationContext) -> None:
        self._feed = ChangeFeed(ctx, self._publish)
        self._streams: dict[Changes, asyncio.AbstractEventLoop] = {}
        self._guard = threading.Lock()  # the feed's thread reads the streams the loop changes

    async def subscribe(self) -> Changes:
        """A new stream's queue, once the feed listens (or LISTENING_SECONDS have passed)."""
        changes: Changes = asyncio.Queue(QUEUE_SIZE)
        with self._guard:
            self._streams[changes] = asyncio.get_running_loop()
        await run_in_threadpool(self._feed.start, LISTENING_SECONDS)
        return changes

    def unsubscribe(self, changes: Changes) -> None:
        with self._guard:
            self._streams.pop(changes, None)

    def close(self) -> None:
        self._feed.stop()

    def end_streams(self) -> None:
        """End every open stream; called from a signal handler, so it takes no lock (which the
        interrupted thread may hold) and copies the streams in one step."""
        self._send(list(self._streams.items()), None)

    def _publish(self, change: Change) -> None:
        with self._guard:
            streams = list(self._streams.items())
        self._send(streams, change)

    @staticmethod
    def _send(
        streams: list[tuple[Changes, asyncio.AbstractEventLoop]], change: Change | None
    ) -> None:
        for changes, loop in streams:
            with contextlib.suppress(RuntimeError):  # its loop has closed: the app is ending
                loop.call_soon_threadsafe(_offer, changes, change)


def _offer(changes: Changes, change: Change | None) -> None:
    if changes.full():
        changes.get_nowait()
    changes.put_nowait(change)


def broadcaster_for(ctx: OperationContext) -> Broadcaster | None:
    return Broadcaster(ctx) if pushes_changes(ctx) else None


def live_of(request: Request) -> Broadcaster | None:
    """The app's broadcaster; None on an Engine DB that must be polled (SQLite)."""
    live = getattr(request.app.state, "live", None)
    assert live is None or isinstance(live, Broadcaster)
    return live
