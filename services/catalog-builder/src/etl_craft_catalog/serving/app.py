"""The catalog's ASGI application: the release being served now, read per request.

Every response carries `X-Robots-Tag: noindex` and `/robots.txt` disallows everything: the
catalog is shared by its link, never listed. No other site may frame it (CSP frame-ancestors
and X-Frame-Options), and it runs only its own scripts. Pages are `no-cache` with an ETag, so
a browser revalidates each time and sees a new release as soon as it is swapped in.
"""

from __future__ import annotations

import hashlib
import logging
import mimetypes
import os
from dataclasses import dataclass
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from etl_craft.drawing.page_policy import CONTENT_SECURITY_POLICY
from etl_craft_catalog.releases import current_release
from etl_craft_catalog.serving.paths import locate, site_segments
from etl_craft_catalog.serving.visitors import Network, is_allowed, visitor_address

log = logging.getLogger(__name__)
ROBOTS = "User-agent: *\nDisallow: /\n"
METHODS = ("GET", "HEAD")
COMMON_HEADERS = {
    "X-Robots-Tag": "noindex, nofollow",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@dataclass(frozen=True)
class SiteSettings:
    site: Path  # the link to the release being served
    prefix: str = "/"  # the base URL's path, with a final slash
    trusted_proxies: tuple[Network, ...] = ()
    allowed_ips: tuple[Network, ...] = ()


class CatalogApp:
    def __init__(self, settings: SiteSettings) -> None:
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        response = await self.respond(Request(scope, receive))
        response.headers.update(COMMON_HEADERS)
        await response(scope, receive, send)

    async def respond(self, request: Request) -> Response:
        peer = request.client.host if request.client else None
        forwarded = request.headers.getlist("x-forwarded-for")
        visitor = visitor_address(peer, forwarded, self.settings.trusted_proxies)
        if not is_allowed(visitor, self.settings.allowed_ips):
            return PlainTextResponse("403: this address may not read the catalog\n", 403)
        if request.method not in METHODS:
            return PlainTextResponse("405: the catalog is read-only\n", 405, {"Allow": "GET, HEAD"})
        raw_path: bytes = request.scope.get("raw_path") or request.scope["path"].encode()
        if raw_path in (b"/robots.txt", f"{self.settings.prefix}robots.txt".encode()):
            return PlainTextResponse(ROBOTS, headers={"Cache-Control": "no-cache"})
        return await run_in_threadpool(self._file, raw_path, request)

    def _file(self, raw_path: bytes, request: Request) -> Response:
        prefix = self.settings.prefix
        parsed = site_segments(raw_path, prefix)
        if parsed is None:
            return _not_found()
        release = current_release(self.settings.site)
        if not release.is_dir():
            return PlainTextResponse("503: the catalog has not been built yet\n", 503)
        found = locate(release, *parsed, prefix)
        if found is None:
            return _not_found()
        if found.redirect is not None:
            return RedirectResponse(found.redirect, 301)
        assert found.file is not None
        return _send(found.file, request)


def _not_found() -> Response:
    return PlainTextResponse("404: no such page in the catalog\n", 404)


def _send(path: Path, request: Request) -> Response:
    # Read whole at once: a release swapped (and its predecessor removed) while the response
    # is being written can then neither truncate nor mix the page.
    try:
        with path.open("rb") as stream:
            stat = os.fstat(stream.fileno())
            body = stream.read()
    except OSError:
        return _not_found()
    identity = f"{stat.st_ino}-{stat.st_mtime_ns}-{stat.st_size}".encode()
    etag = '"' + hashlib.sha256(identity).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if etag in [value.strip() for value in request.headers.get("if-none-match", "").split(",")]:
        return Response(status_code=304, headers=headers)
    kind, _ = mimetypes.guess_type(path.name)
    media = kind or "application/octet-stream"
    if media.startswith("text/") or media in ("application/javascript", "application/json"):
        media += "; charset=utf-8"
    if request.method == "HEAD":
        headers["Content-Length"] = str(len(body))
        return Response(status_code=200, headers=headers, media_type=media)
    return Response(body, headers=headers, media_type=media)
