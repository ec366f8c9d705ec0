"""Sessions kept in the Engine DB: sign-out ends one for every process, a sign-in form's nonce
serves once, every failed sign-in is recorded, and failures throttle a client and an account;
every request leaves one access log line."""

from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient

from etl_craft.operations.access.api_tokens import revoke_token
from etl_craft_ui.app import ACCESS_LOGGER, create_app
from etl_craft_ui.pages.sign_in import SIGN_IN_COOKIE
from etl_craft_ui.sessions import SESSION_COOKIE
from tests.integration.ui.conftest import Ui, csrf_of, settings_of, sign_in

PAUSES = "SELECT count(*) AS n FROM AUD_PIPELINE_PAUSES"
SIGN_INS = (
    "SELECT ACCOUNT AS account, OUTCOME AS outcome, REASON AS reason FROM AUD_UI_SIGN_INS "
    "WHERE CLIENT = :client ORDER BY SIGN_IN_ID"
)


def browser_from(ui: Ui, client: str, **settings: int) -> TestClient:
    """A browser at address ``client``, of an app with these sign-in limits."""
    app = create_app(ui.ctx, settings_of(**settings)) if settings else ui.app
    return TestClient(app, client=(client, 50000), follow_redirects=False)


def test_a_cookie_replayed_after_sign_out_neither_reads_nor_changes_anything(ui: Ui) -> None:
    browser = ui.browser()
    sign_in(browser, ui.tokens["operator"])
    cookie, csrf = browser.cookies[SESSION_COOKIE], csrf_of(browser.get("/"))
    assert browser.post("/sign-out", data={"csrf_token": csrf}).status_code == 303
    before = ui.rows(PAUSES)

    replay = ui.browser()
    replay.cookies.set(SESSION_COOKIE, cookie)
    page = replay.get("/pipelines")
    fragment = replay.get("/", headers={"HX-Request": "true"})
    pause = replay.post("/pipelines/orders/pause", data={"reason": "x", "csrf_token": csrf})
    other_process = TestClient(create_app(ui.ctx, ui.settings), follow_redirects=False)
    other_process.cookies.set(SESSION_COOKIE, cookie)

    assert page.status_code == 303
    assert page.headers["location"].startswith("/sign-in")
    assert fragment.status_code == 401
    assert pause.status_code == 401
    assert "signed out" in pause.text
    assert other_process.get("/pipelines").status_code == 303
    assert ui.rows(PAUSES) == before


def test_a_sign_in_forms_nonce_serves_one_sign_in(ui: Ui) -> None:
    browser = browser_from(ui, "10.0.1.1")
    form = csrf_of(browser.get("/sign-in"))
    nonce_cookie = browser.cookies[SIGN_IN_COOKIE]
    fields = {"token": ui.tokens["viewer"], "csrf_token": form, "next": "/"}
    first = browser.post("/sign-in", data=fields)
    replay = browser_from(ui, "10.0.1.1")  # the form and its cookie, sent a second time
    replay.cookies.set(SIGN_IN_COOKIE, nonce_cookie, path="/sign-in")
    again = replay.post("/sign-in", data=fields)

    assert first.status_code == 303
    assert again.status_code == 401
    assert "this sign-in form was used already" in again.text
    assert SESSION_COOKIE not in again.headers.get("set-cookie", "")
    assert [row["outcome"] for row in ui.rows(SIGN_INS, client="10.0.1.1")] == ["OK", "FAILED"]


def test_every_failed_sign_in_is_recorded_with_its_client_account_and_reason(ui: Ui) -> None:
    token = ui.token("gone_soon", "viewer")
    revoke_token(ui.tester, "gone_soon")
    browser = browser_from(ui, "10.0.2.1")
    unknown = sign_in(browser, "etlc_guessed")
    revoked = sign_in(browser, token)

    assert (unknown.status_code, revoked.status_code) == (401, 401)
    [first, second] = ui.rows(SIGN_INS, client="10.0.2.1")
    assert (first["account"], first["outcome"]) == (None, "FAILED")
    assert "the bearer token is not known" in first["reason"]
    assert (second["account"], second["outcome"]) == ("gone_soon", "FAILED")
    assert "token gone_soon was revoked" in second["reason"]


def test_a_client_with_too_many_failures_is_refused_with_429_even_with_a_good_token(
    ui: Ui,
) -> None:
    browser = browser_from(ui, "10.0.3.1", sign_in_client_failures=3)
    tries = [sign_in(browser, f"etlc_guess_{n}").status_code for n in range(3)]
    throttled = sign_in(browser, f"etlc_guess_{3}")
    good = sign_in(browser, ui.tokens["viewer"])
    elsewhere = sign_in(
        browser_from(ui, "10.0.3.2", sign_in_client_failures=3), ui.tokens["viewer"]
    )

    assert tries == [401, 401, 401]
    for refused in (throttled, good):
        assert refused.status_code == 429
        assert "too many failed sign-ins from 10.0.3.1: 3 in the last 15 minutes" in refused.text
        assert refused.headers["retry-after"] == "900"
        assert SESSION_COOKIE not in refused.headers.get("set-cookie", "")
    assert elsewhere.status_code == 303
    assert len(ui.rows(SIGN_INS, client="10.0.3.1")) == 3  # a throttled try reads nothing


def test_an_account_with_too_many_failures_is_refused_from_any_client(ui: Ui) -> None:
    token = ui.token("hammered", "viewer")
    revoke_token(ui.tester, "hammered")
    limits = {"sign_in_account_failures": 2}
    tries = [
        sign_in(browser_from(ui, f"10.0.4.{n}", **limits), token).status_code for n in range(3)
    ]
    [third] = [sign_in(browser_from(ui, "10.0.4.9", **limits), token)]

    assert tries == [401, 401, 429]
    assert third.status_code == 429
    assert "too many failed sign-ins as token hammered: 2 in the last 15 minutes" in third.text


def test_each_request_leaves_one_access_log_line_with_its_actor(
    ui: Ui, caplog: pytest.LogCaptureFixture
) -> None:
    ui.client("viewer")  # signed in before the lines are counted
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)
    ui.get("viewer", "/pipelines")
    ui.browser().get("/sign-in", params={"token": ui.tokens["viewer"]})

    lines = [record.getMessage() for record in caplog.records if record.name == ACCESS_LOGGER]
    assert len(lines) == 2, lines
    assert lines[0].startswith('"GET /pipelines" 200 ')
    assert lines[0].endswith(" by viewer_token")
    assert lines[1].startswith('"GET /sign-in?token=***" 200 ')
    assert lines[1].endswith(" by anonymous")
    assert ui.tokens["viewer"] not in "\n".join(lines)
