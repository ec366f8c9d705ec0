"""The site beneath a base URL's path prefix, through a small reverse proxy as an organization
would run one (it forwards /catalog/... unchanged and appends X-Forwarded-For); and releases
swapped in while pages are being read."""

from __future__ import annotations

import functools
import http.client
import http.server
import re
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft_catalog.releases import publish
from tests.fixtures.processes import free_port
from tests.fixtures.waiting import wait_for
from tests.integration.catalog.site import published_site, request, serving, write_site

PREFIX = "/catalog/"
VISITOR = "203.0.113.9"


def proxy_handler(upstream: int) -> type[http.server.BaseHTTPRequestHandler]:
    class Forward(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._forward()

        def do_HEAD(self) -> None:
            self._forward()

        def _forward(self) -> None:
            connection = http.client.HTTPConnection("127.0.0.1", upstream, timeout=10)
            # As nginx's proxy_add_x_forwarded_for: the client's address appended.
            connection.request(self.command, self.path, headers={"X-Forwarded-For": VISITOR})
            response = connection.getresponse()
            body = response.read()
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in ("connection", "transfer-encoding", "date", "server"):
                    self.send_header(key, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            connection.close()

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Forward


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[int]:
    site = published_site(tmp_path)
    with serving(
        site, prefix=PREFIX, trusted=("127.0.0.1",), allowed=(f"{VISITOR}/32",)
    ) as upstream:
        proxy = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), proxy_handler(upstream))
        thread = threading.Thread(target=proxy.serve_forever, daemon=True)
        thread.start()
        try:
            yield proxy.server_address[1]
        finally:
            proxy.shutdown()
            proxy.server_close()


def _join(page: str, link: str) -> str:
    return urllib.parse.urljoin(f"http://proxy{page}", link).removeprefix("http://proxy")


def _links(body: bytes) -> list[str]:
    return re.findall(r'href="([^"]+)"', body.decode())


def test_pages_links_assets_and_redirects_work_beneath_the_prefix(proxied: int) -> None:
    home = request(proxied, "GET", "/catalog/")
    redirect = request(proxied, "GET", "/catalog/tables")
    tables = request(proxied, "GET", redirect.headers["location"])
    # Each relative link of a page, resolved against the page's URL as a browser does.
    followed = [request(proxied, "GET", _join("/catalog/", link)) for link in _links(home.body)]
    from_tables = [
        request(proxied, "GET", _join("/catalog/tables/", link)) for link in _links(tables.body)
    ]

    assert home.status == 200
    assert (redirect.status, redirect.headers["location"]) == (301, "/catalog/tables/")
    assert tables.status == 200
    assert [reply.status for reply in followed + from_tables] == [200, 200, 200, 200]
    assert followed[0].headers["content-type"] == "text/css; charset=utf-8"
    assert request(proxied, "GET", "/catalog").headers["location"] == "/catalog/"


def test_outside_the_prefix_nothing_is_served_but_robots_txt(proxied: int) -> None:
    assert request(proxied, "GET", "/index.html").status == 404
    assert request(proxied, "GET", "/catalog/.hidden").status == 404
    assert request(proxied, "GET", "/catalog/%2e%2e/catalog/index.html").status == 404
    assert request(proxied, "GET", "/robots.txt").body == b"User-agent: *\nDisallow: /\n"
    assert request(proxied, "GET", "/catalog/robots.txt").status == 200


def test_a_rebuild_swapped_in_while_serving_breaks_no_page(tmp_path: Path) -> None:
    site = published_site(tmp_path, "0")
    seen: list[tuple[int, bytes]] = []
    done = threading.Event()

    with serving(site) as port:

        def read_pages() -> None:
            while not done.is_set():
                for path in ("/", "/tables/", "/tables/orders.html"):
                    reply = request(port, "GET", path)
                    seen.append((reply.status, reply.body))

        def read_past(count: int) -> bool:
            return len(seen) >= count or not reader.is_alive()

        reader = threading.Thread(target=read_pages)
        reader.start()
        try:
            for version in range(1, 6):
                wanted = len(seen) + 6
                publish(site, functools.partial(write_site, version=str(version)))
                # Wait on requests actually landing after each swap, not on time.
                wait_for(
                    functools.partial(read_past, wanted),
                    f"six pages read after publishing version {version}",
                    every=0.01,
                )
        finally:
            done.set()
            reader.join()
        final = request(port, "GET", "/tables/orders.html").body

    complete = re.compile(rb"^<html>.*v[0-5]</html>$")
    assert len(seen) >= 30
    assert [status for status, _ in seen] == [200] * len(seen)
    assert all(complete.match(body) for _, body in seen)
    assert final == b"<html>orders v5</html>"
