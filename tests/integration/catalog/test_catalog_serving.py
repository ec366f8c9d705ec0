"""The catalog server: one path check for GET and HEAD (B65), symlinks out of the site, robots
headers, read-only methods, directory redirects, visitor addresses and Allowed_ips."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.catalog.site import published_site, request, serving

REFUSED_PATHS = [
    "/.hidden",
    "/%2ehidden",
    "/tables/.x",
    "/tables/../.hidden",
    "/tables/%2e%2e/.hidden",
    "/%2e%2e/",
    "/..%2f..%2fetc/passwd",
    "/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/tables/%00orders.html",
    "/tables/orders.html%00.html",
    "/tables/orders.html/",
    "/outside.html",
    "/linked/secret.txt",
    "/no-such-page.html",
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalog")
    (root / "secret.txt").write_text("outside the site")
    site = published_site(root)
    release = site.resolve()
    # Links inside the release that point out of it: a file and a folder.
    (release / "outside.html").symlink_to(root / "secret.txt")
    (release / "linked").symlink_to(root, target_is_directory=True)
    return site


@pytest.fixture(scope="module")
def port(site: Path) -> Iterator[int]:
    with serving(site) as port:
        yield port


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("path", REFUSED_PATHS)
def test_hidden_traversing_and_outside_paths_are_not_found(
    port: int, method: str, path: str
) -> None:
    reply = request(port, method, path)

    assert reply.status == 404
    assert b"secret" not in reply.body
    assert b"outside the site" not in reply.body
    assert reply.headers["x-robots-tag"] == "noindex, nofollow"


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_pages_are_served_with_no_cache_and_noindex(port: int, method: str) -> None:
    reply = request(port, method, "/tables/orders.html")

    assert reply.status == 200
    assert reply.body == (b"<html>orders v1</html>" if method == "GET" else b"")
    assert reply.headers["content-length"] == str(len(b"<html>orders v1</html>"))
    assert reply.headers["content-type"] == "text/html; charset=utf-8"
    assert reply.headers["cache-control"] == "no-cache"
    assert reply.headers["x-robots-tag"] == "noindex, nofollow"
    again = request(port, "GET", "/tables/orders.html", {"If-None-Match": reply.headers["etag"]})
    assert (again.status, again.body) == (304, b"")


def test_a_directory_redirects_to_its_slash_form_and_serves_its_index(port: int) -> None:
    redirect = request(port, "GET", "/tables")
    index = request(port, "GET", "/tables/")

    assert (redirect.status, redirect.headers["location"]) == (301, "/tables/")
    assert (index.status, b"orders.html" in index.body) == (200, True)
    assert request(port, "GET", "/").body.startswith(b"<html>")


@pytest.mark.parametrize("path", ["/tables/orders.html", "/no-such-page.html", "/robots.txt"])
def test_no_other_site_may_frame_the_catalog(port: int, path: str) -> None:
    reply = request(port, "GET", path)

    policy = [part.strip() for part in reply.headers["content-security-policy"].split(";")]
    assert "frame-ancestors 'none'" in policy
    assert "script-src 'self'" in policy
    assert reply.headers["x-frame-options"] == "DENY"


def test_robots_txt_disallows_everything(port: int) -> None:
    reply = request(port, "GET", "/robots.txt")

    assert (reply.status, reply.body) == (200, b"User-agent: *\nDisallow: /\n")
    assert reply.headers["x-robots-tag"] == "noindex, nofollow"


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS"])
def test_only_get_and_head_are_allowed(port: int, method: str) -> None:
    reply = request(port, method, "/index.html")

    assert (reply.status, reply.headers["allow"]) == (405, "GET, HEAD")
    assert reply.headers["x-robots-tag"] == "noindex, nofollow"


def test_forwarded_addresses_count_only_from_trusted_proxies(site: Path) -> None:
    visitor = {"X-Forwarded-For": "192.0.2.10"}
    # The peer (loopback) is not a trusted proxy: its header is ignored, the peer is judged.
    with serving(site, allowed=("192.0.2.0/24",)) as port:
        assert request(port, "GET", "/index.html", visitor).status == 403
    with serving(site, allowed=("127.0.0.0/8",)) as port:
        assert request(port, "GET", "/index.html", visitor).status == 200
    # Trusted, it names the visitor; the rightmost untrusted hop is the one that counts.
    with serving(site, trusted=("127.0.0.1",), allowed=("192.0.2.0/24",)) as port:
        assert request(port, "GET", "/index.html", visitor).status == 200
        refused = request(
            port, "GET", "/index.html", {"X-Forwarded-For": "192.0.2.10, 198.51.100.7"}
        )
        assert refused.status == 403
        assert refused.headers["x-robots-tag"] == "noindex, nofollow"
        assert (
            request(port, "HEAD", "/index.html", {"X-Forwarded-For": "198.51.100.7"}).status == 403
        )
