"""The metadata editor in Debian's chromium, against a live `etl-craft-ui` process: an admin's
dependency that would close a cycle is refused with validate's message; a new task with its
parameters and upstream task is previewed, applied as the next migration file, and drawn on
the pipeline's page. Each step leaves a screenshot under
${ETL_CRAFT_TEST_ARTIFACTS:-<repo>/.artifacts}/browser/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.test_ui_foundation_browser import shots, signed_in
from tests.integration.ui.conftest import Ui, ui
from tests.integration.ui.test_live_ui import live_url

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api")
__all__ = ["live_url", "shots", "ui"]  # the fixtures this module uses, from other modules
REFUSED_STATUS_LOGGED = (
    "Failed to load resource: the server responded with a status of 409 (Conflict)"
)
PARAMETERS = (
    "ACTION=CREATE_TABLE\nTARGET_OBJECT=dm.enriched\nSOURCE_SQL=SELECT orders FROM dm.summary"
)


def test_a_cycle_is_refused_and_a_new_task_becomes_a_migration_drawn_on_its_pipeline(
    ui: Ui, live_url: str, shots: Path
) -> None:
    name = ui.project.engine.dialect
    expect = playwright_api.expect
    messages: list[str] = []
    with playwright_api.sync_playwright() as driver:
        browser, page = signed_in(driver, live_url, ui.tokens["admin"], messages)
        try:
            page.goto(f"{live_url}/metadata/pipelines/orders")
            page.screenshot(path=shots / f"metadata-{name}-1-pipeline.png", full_page=True)
            page.click("text=Add a task dependency")
            page.fill("#key_task", "land")
            page.fill("#key_upstream_pipeline", "orders")
            page.fill("#key_upstream_task", "summary")
            page.click("button:has-text('Preview the migration')")
            expect(page.locator(".message.refusal")).to_contain_text(
                "the task dependencies form a cycle"
            )
            assert page.locator("form[action='/metadata/apply']").count() == 0
            page.screenshot(path=shots / f"metadata-{name}-2-cycle-refused.png", full_page=True)

            page.goto(f"{live_url}/metadata/pipelines/orders")
            page.click("text=Add a task >> nth=0")
            page.fill("#key_task", "enrich")
            page.select_option("#field_HANDLER", "SQL")
            page.fill("#parameters", PARAMETERS)
            page.fill("#upstream", "summary")
            page.click("button:has-text('Preview the migration')")
            expect(page.locator("h1")).to_contain_text("0003_add_task_enrich.sql")
            page.screenshot(path=shots / f"metadata-{name}-3-preview.png", full_page=True)
            page.click("form[action='/metadata/apply'] button")
            expect(page.locator("h1")).to_contain_text("Applied migration")
            page.screenshot(path=shots / f"metadata-{name}-4-applied.png", full_page=True)

            page.goto(f"{live_url}/pipelines/orders")
            expect(page.locator("svg.etl-drawing")).to_contain_text("enrich")
            page.screenshot(path=shots / f"metadata-{name}-5-drawn.png", full_page=True)
        finally:
            browser.close()
    assert (ui.project.root / "migrations" / "0003_add_task_enrich.sql").is_file()
    # The refused preview answers 409, as the API does for a metadata refusal; chromium logs
    # that status, and nothing else may be logged.
    assert messages == [f"error: {REFUSED_STATUS_LOGGED}"]
