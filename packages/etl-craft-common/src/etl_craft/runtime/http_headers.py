"""Security headers on every answer of an HTTP service, refusals and errors included: an answer
(which may hold a new token or a session) is never cached, its type never sniffed, it is never
framed and sends no referrer; and no Server header says what serves it.

Written against ASGI itself, like http_tracing, so that the shared library needs no framework.
"""

from __future__ import annotations

from etl_craft.runtime.http_tracing import ASGIApp, Message, Receive, Scope, Send

Headers = tuple[tuple[bytes, bytes], ...]

SECURITY_HEADERS: Headers = (
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),  # for browsers that predate frame-ancestors
)


class SecurityHeaders:
    """Sets ``headers`` on every answer, replacing any the application set of the same names."""

    def __init__(self, app: ASGIApp, headers: Headers = SECURITY_HEADERS) -> None:
        self.app = app
        self.headers = headers
        self.replaced = {name for name, _ in headers} | {b"server"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [
                    (key, value)
                    for key, value in message.get("headers", ())
                    if key.lower() not in self.replaced
                ]
                message = {**message, "headers": [*kept, *self.headers]}
            await send(message)

        await self.app(scope, receive, secured)
