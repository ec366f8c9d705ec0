"""The demo's catalog in Debian's chromium: search for a column, open its lineage, click a
column and see its whole path highlighted, follow a breadcrumb. Each step leaves a screenshot
under ${ETL_CRAFT_TEST_ARTIFACTS:-<repo>/.artifacts}/browser/ for a person to look at."""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.catalog_demo import BuiltCatalog, build_demo_catalog
from tests.fixtures.databases import REQUIRE_VARIABLE

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(
    os.environ.get("ETL_CRAFT_TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / ".artifacts")
)
playwright_api = pytest.importorskip("playwright.sync_api")


def _require_chromium() -> None:
    if CHROMIUM.is_file():
        return
    reason = f"no chromium at {CHROMIUM}; install it with apt-get install -y chromium"
    if os.environ.get(REQUIRE_VARIABLE) == "1" or os.environ.get("CI"):
        pytest.fail(f"the browser tests are required under CI but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltCatalog:
    _require_chromium()
    return build_demo_catalog(tmp_path_factory.mktemp("catalog-browser"))


@pytest.fixture(scope="module")
def site_url(built: BuiltCatalog) -> Iterator[str]:
    """The site served from a path prefix, as a reverse proxy would put it."""
    root = built.site.parent / "served"
    (root / "catalog").parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(built.site.resolve(), root / "catalog")
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/catalog/"
    server.shutdown()
    thread.join()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def shots() -> Path:
    folder = ARTIFACTS / "browser"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_search_a_column_trace_its_path_and_follow_a_breadcrumb(site_url: str, shots: Path) -> None:
    with playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM))
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(site_url)
            page.fill("#search-box", "customer_support_fact.agent_team")
            hit = page.locator("#search-results li").first
            playwright_api.expect(hit).to_contain_text("dm.customer_support_fact.agent_team")
            playwright_api.expect(hit.locator(".kind")).to_have_text("column")
            page.screenshot(path=shots / "1-search.png")

            hit.locator("a").click()
            page.wait_for_url("**/tables/dm.customer_support_fact.html#col-agent_team")
            svg = page.locator(".graph-box.lineage:not([hidden]) svg")
            playwright_api.expect(svg).to_have_class(re.compile(r"\btracing\b"))
            page.screenshot(path=shots / "2-lineage.png", full_page=True)

            port = svg.locator('.port[data-id="c:pre_dm.interactions:agent_team"]')
            port.click()
            lit = svg.locator("path.edge.highlight")
            playwright_api.expect(lit).to_have_count(2)
            sources = sorted(lit.evaluate_all("(es) => es.map((e) => e.dataset.source)"))
            # The fact copies pre_dm's agent_team, which pre_dm looked up in ref.agents.
            assert sources == ["c:pre_dm.interactions:agent_team", "c:ref.agents:team"]
            ends = svg.locator(".port.highlight")
            assert sorted(ends.evaluate_all("(ps) => ps.map((p) => p.dataset.id)")) == [
                "c:dm.customer_support_fact:agent_team",
                "c:pre_dm.interactions:agent_team",
                "c:ref.agents:team",
            ]
            page.screenshot(path=shots / "3-highlighted.png", full_page=True)

            page.locator("nav.crumbs a", has_text="dm").click()
            page.wait_for_url("**/catalog/warehouse.html#default-dm")
            playwright_api.expect(page.locator("#default-dm")).to_contain_text(
                "dm.customer_support_fact"
            )
            page.screenshot(path=shots / "4-breadcrumb.png")
        finally:
            browser.close()
