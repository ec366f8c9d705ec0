"""The request body limit, enforced before a body is read and so before the token is checked.

Starlette's own limit acts only once a route reads the body, and answers in plain text; this
one refuses a declared Content-Length over the limit before routing, and cuts a streamed
(chunked) body as soon as it passes the limit, each time with a 413 problem document.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from etl_craft_api.problems import problem


class BodyTooLarge(HTTPException):
    def __init__(self, max_bytes: int, size: str) -> None:
        super().__init__(413, too_large(max_bytes, size))


def too_large(max_bytes: int, size: str) -> str:
    return (
        f"the request body is {size}; the API takes at most {max_bytes} bytes: send a smaller "
        "body, or raise the limit (etl-craft api --max-body-bytes, ETL_CRAFT_API_MAX_BODY_BYTES)"
    )


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            refusal = problem(413, too_large(self.max_bytes, f"{int(declared)} bytes"))
            await refusal(scope, receive, send)
            return
        await self.app(scope, self.counting(receive), send)

    def counting(self, receive: Receive) -> Receive:
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                # Raised where the route reads its body; FastAPI hands it to the problem handler.
                raise BodyTooLarge(self.max_bytes, f"over {self.max_bytes} bytes")
            return message

        return counted
