"""A small catalog site written through releases.publish, and a server of it on a free port."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from etl_craft_catalog.releases import publish
from etl_craft_catalog.serving.app import CatalogApp, SiteSettings
from etl_craft_catalog.serving.server import SiteServer
from etl_craft_catalog.serving.visitors import networks
from tests.fixtures.processes import free_port


def write_site(folder: Path, version: str = "1") -> None:
    """Pages link relatively, as the built site does, so they work beneath any prefix."""
    (folder / "index.html").write_text(
        f'<html><link href="assets/site.css"><a href="tables/">tables</a> v{version}</html>'
    )
    (folder / "assets").mkdir()
    (folder / "assets" / "site.css").write_text("body { color: black }\n")
    (folder / "tables").mkdir()
    (folder / "tables" / "index.html").write_text(
        f'<html><a href="../index.html">home</a><a href="orders.html">orders</a> v{version}</html>'
    )
    (folder / "tables" / "orders.html").write_text(f"<html>orders v{version}</html>")
    (folder / ".hidden").write_text("secret")
    (folder / "tables" / ".x").write_text("secret")


def published_site(root: Path, version: str = "1") -> Path:
    site = root / "site"
    publish(site, lambda folder: write_site(folder, version))
    return site


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes


def request(port: int, method: str, path: str, headers: dict[str, str] | None = None) -> Reply:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        # The path is sent exactly as written: http.client does not normalise it.
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        body = response.read()
        found = {key.lower(): value for key, value in response.getheaders()}
        return Reply(response.status, found, body)
    finally:
        connection.close()


@contextmanager
def serving(
    site: Path,
    prefix: str = "/",
    trusted: tuple[str, ...] = (),
    allowed: tuple[str, ...] = (),
) -> Iterator[int]:
    settings = SiteSettings(site, prefix, networks(trusted), networks(allowed))
    port = free_port()
    server = SiteServer(CatalogApp(settings), "127.0.0.1", port)
    server.start()
    try:
        yield port
    finally:
        server.stop()
