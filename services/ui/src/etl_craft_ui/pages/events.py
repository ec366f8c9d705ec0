"""GET /events: the Engine DB's changes as server-sent events, for a signed-in session.

The first event, "listening", comes once the stream misses nothing; then each change is one
event named for what changed (run, task-run, attempt, worker; wake-up when anything may have),
its data the row's id and new status. A comment every HEARTBEAT_SECONDS keeps proxies from
closing a quiet stream, and checks the session again: the stream ends once it is signed out,
as its next request would be refused. On SQLite there are no changes to tell: the answer is
204, which tells a browser's EventSource not to come back; pages poll.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from etl_craft.operations.changes import Change
from etl_craft_ui.live import Broadcaster, live_of
from etl_craft_ui.sessions import EVENTS, current_session, signed_in

router = APIRouter(tags=["events"])

HEARTBEAT_SECONDS = 15.0
RETRY_MS = 3000  # how soon a browser comes back after the stream breaks
# The first event: from here on every change is told, so what the page shows may be read once
# more (it was rendered before, and changes in between were told to no one).
LISTENING = "listening"


@router.get(EVENTS, dependencies=[Depends(signed_in)])
async def events(request: Request) -> Response:
    live = live_of(request)
    if live is None:
        return Response(status_code=204)
    return StreamingResponse(
        _stream(request, live),
        media_type="text/event-stream",
        headers={"x-accel-buffering": "no"},  # nginx would hold the events back otherwise
    )


async def _stream(request: Request, live: Broadcaster) -> AsyncIterator[str]:
    changes = await live.subscribe()
    try:
        yield f"retry: {RETRY_MS}\nevent: {LISTENING}\ndata: {{}}\n\n"
        while True:
            try:
                change = await asyncio.wait_for(changes.get(), HEARTBEAT_SECONDS)
            except TimeoutError:
                if await run_in_threadpool(current_session, request) is None:
                    return
                yield ": heartbeat\n\n"
                continue
            if change is None:
                return
            yield frame(change)
    finally:
        live.unsubscribe(changes)


def frame(change: Change) -> str:
    data = json.dumps({"id": change.row_id, "status": change.status})
    return f"event: {change.kind}\ndata: {data}\n\n"
