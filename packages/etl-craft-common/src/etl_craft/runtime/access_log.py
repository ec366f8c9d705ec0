"""One access log line per request: method, path and query, status, duration and actor.

Written by etl-craft for the API and the web UI, not by uvicorn (whose access log is off), each
service under a logger of its own: the value of a query parameter with a
sensitive name (token, password, secret, key) and anything shaped like a token are masked, and
control characters are escaped so a request cannot forge a line.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any
from urllib.parse import parse_qsl, urlencode

from etl_craft.core.redaction import DEFAULT_NAMES, MASK, TOKEN_PREFIX
from etl_craft.runtime.http_tracing import ASGIApp, Message, Receive, Scope, Send

ACTOR = "etl_craft_actor"  # the key of scope["state"] where authentication leaves the token's name
ANONYMOUS = "anonymous"
MAX_TARGET = 300
_TOKEN_SHAPED = re.compile(rf"{TOKEN_PREFIX}[A-Za-z0-9_\-]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class AccessLog:
    def __init__(self, app: ASGIApp, logger: str) -> None:
        self.app = app
        self.log = logging.getLogger(logger)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500  # 500: no answer began
        state: dict[str, Any] = scope.setdefault("state", {})

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            took = (time.perf_counter() - started) * 1000
            shown = f"{scope['method']} {target(scope)}"
            self.log.info('"%s" %d %.1f ms by %s', shown, status, took, state.get(ACTOR, ANONYMOUS))


def target(scope: Scope) -> str:
    """The request's path and query as they may be logged."""
    shown = scope["path"]
    query = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
    if query:
        masked = [(name, MASK if DEFAULT_NAMES.key(name) else value) for name, value in query]
        shown += "?" + urlencode(masked, safe="*")
    shown = _TOKEN_SHAPED.sub(TOKEN_PREFIX + MASK, shown)
    return _CONTROL.sub(lambda found: f"\\x{ord(found[0]):02x}", shown[:MAX_TARGET])
