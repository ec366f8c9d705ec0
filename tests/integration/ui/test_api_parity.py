"""A page and the API never disagree: both render the same operation's view of the same state."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient

from etl_craft_api.app import create_app as create_api
from tests.fixtures.metadata import TESTER, execute
from tests.integration.ui.conftest import Ui


def api_document(ui: Ui, path: str) -> dict[str, Any]:
    with TestClient(create_api(ui.ctx)) as api:
        answer = api.get(path, headers={"Authorization": f"Bearer {ui.tokens['viewer']}"})
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert isinstance(found, dict)
    return found


def test_the_projects_page_shows_the_apis_health_figures(ui: Ui) -> None:
    ui.end_live_runs()
    ui.project.new_run("orders", "manual:parity-running")
    ui.project.queued_run("vault", "manual:parity-queued")
    health = api_document(ui, "/api/v1/project/health")
    page = ui.get("viewer", "/").text
    figures = dict(
        re.findall(r'<div class="muted">([^<]+)</div><div class="figure">(\d+)</div>', page)
    )
    assert (health["running"], health["executing"]) == (1, 0)  # admitted, no task started
    assert health["queued_runs"] == 1
    assert figures["Running"] == str(health["executing"])
    assert figures["Waiting"] == str(health["running"] - health["executing"])
    assert figures["Failed today"] == str(health["failed_today"])
    assert figures["Queued work"] == str(health["queued_runs"] + health["queued_attempts"])
    assert figures["Pipelines"] == str(health["pipelines"])
    ui.end_live_runs()


def test_the_interventions_page_lists_what_the_api_lists(ui: Ui) -> None:
    log = api_document(ui, "/api/v1/interventions?limit=500")
    entries = log["entries"]
    assert isinstance(entries, list)
    assert entries  # the cancels of the test above, at least
    page = ui.get("viewer", "/interventions").text
    assert page.count("<strong>") == len(entries)
    for entry in entries:
        assert entry["actor"] in page
        if entry["reason"]:
            assert entry["reason"] in page


def test_a_failed_alert_delivery_is_shown_on_the_alerts_page_and_by_the_api(ui: Ui) -> None:
    run_id = ui.project.new_run("orders", "manual:parity-alert")
    with ui.project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            "INSERT INTO AUD_ALERT_DELIVERIES (CHANNEL, EVENT, EVENT_KEY, PIPELINE_RUN_ID, "
            "OUTCOME, TRIES, LAST_ERROR, RAISED_AT) VALUES ('ops', 'RUN_FAILED', :k, :r, "
            "'FAILED', 6, 'the channel answered HTTP 503', etl_craft_now())",
            k=f"RUN_FAILED:{run_id}:0",
            r=run_id,
        )
    found = api_document(ui, "/api/v1/alerts")
    [mine] = [item for item in found["deliveries"] if item["run_id"] == run_id]
    assert (mine["channel"], mine["event"], mine["outcome"], mine["tries"]) == (
        "ops",
        "RUN_FAILED",
        "FAILED",
        6,
    )
    assert found["failed"] >= 1
    page = ui.get("viewer", "/alerts").text
    assert f'<a href="/runs/{run_id}">run {run_id}</a>' in page
    assert "the channel answered HTTP 503" in page
    assert "failed</strong>" in page
    ui.end_live_runs()
