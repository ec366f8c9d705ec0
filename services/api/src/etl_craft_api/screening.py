"""Requests refused before routing: a NUL character in the path or query string (no identifier
holds one, and PostgreSQL refuses one in text), and a query parameter given more than once
(which value counts would depend on the framework). Each is a 422 problem document."""

from __future__ import annotations

from collections import Counter
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from etl_craft.core.text import NUL, holds_nul
from etl_craft_api.problems import invalid

Error = dict[str, object]


class Screening:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        errors = screen(scope) if scope["type"] == "http" else []
        if errors:
            await invalid(errors)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def screen(scope: Scope) -> list[Error]:
    query = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
    errors: list[Error] = []
    if holds_nul(scope["path"]):
        errors.append(_error(("path",), "holds a NUL character (%00); remove it"))
    for name, value in query:
        if holds_nul(name) or holds_nul(value):
            errors.append(_error(("query", name), "holds a NUL character (%00); remove it"))
    for name, times in sorted(Counter(name for name, _ in query).items()):
        if times > 1:
            errors.append(_error(("query", name), f"is given {times} times; send it once"))
    return errors


def _error(loc: tuple[str, ...], msg: str) -> Error:
    # The name is cut and its NUL shown escaped: the detail echoes neither whole.
    return {"loc": [part[:100].replace(NUL, "\\x00") for part in loc], "msg": msg}
