"""The web UI in Debian's chromium, served by a live `etl-craft-ui` process: htmx loads and the
content security policy refuses nothing the pages need (no console message at all); an
operator signs in, pauses a pipeline with a reason and sees it paused and listed; a viewer
sees no action button. Each step leaves a screenshot under
${ETL_CRAFT_TEST_ARTIFACTS:-<repo>/.artifacts}/browser/ for a person to look at."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_catalog_browser import ARTIFACTS, CHROMIUM, _require_chromium
from tests.integration.ui.conftest import Ui, ui
from tests.integration.ui.test_live_ui import live_url

playwright_api = pytest.importorskip("playwright.sync_api")
__all__ = ["live_url", "ui"]  # the fixtures this module uses, from the UI's integration tests


@pytest.fixture(scope="module")
def shots() -> Path:
    _require_chromium()
    folder = ARTIFACTS / "browser"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def signed_in(driver: Any, url: str, token: str, messages: list[str]) -> Any:
    browser = driver.chromium.launch(executable_path=str(CHROMIUM))
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.on("console", lambda message: messages.append(f"{message.type}: {message.text}"))
    page.goto(f"{url}/")
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")
    return browser, page


def test_an_operator_pauses_a_pipeline_and_a_viewer_sees_no_button(
    ui: Ui, live_url: str, shots: Path
) -> None:
    name = ui.project.engine.dialect
    messages: list[str] = []
    with playwright_api.sync_playwright() as driver:
        browser, page = signed_in(driver, live_url, ui.tokens["operator"], messages)
        try:
            assert page.evaluate("typeof window.htmx") == "object"
            page.screenshot(path=shots / f"ui-{name}-1-projects.png", full_page=True)
            page.goto(f"{live_url}/pipelines/orders")
            playwright_api.expect(page.locator("svg.etl-drawing")).to_be_visible()
            page.fill("#reason-pause-orders", "browser test pause")
            page.click("form[action='/pipelines/orders/pause'] button")
            page.wait_for_url(f"{live_url}/pipelines/orders")
            playwright_api.expect(page.locator(".status-paused")).to_have_text("PAUSED")
            page.screenshot(path=shots / f"ui-{name}-2-paused.png", full_page=True)
            page.goto(f"{live_url}/interventions")
            playwright_api.expect(page.locator("main table")).to_contain_text("browser test pause")
            page.keyboard.press("Tab")
            playwright_api.expect(page.locator(".skip-link")).to_be_focused()
            page.screenshot(path=shots / f"ui-{name}-3-interventions.png")
        finally:
            browser.close()
        browser, page = signed_in(driver, live_url, ui.tokens["viewer"], messages)
        try:
            page.goto(f"{live_url}/pipelines")
            playwright_api.expect(page.locator("main table")).to_contain_text("PAUSED")
            assert page.locator("form[action$='/pause'], form[action$='/resume']").count() == 0
            page.screenshot(path=shots / f"ui-{name}-4-viewer.png", full_page=True)
        finally:
            browser.close()
    assert messages == []
