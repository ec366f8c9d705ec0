"""Sign-in with an API token, the session cookie, its expiry, CSRF, and sign-out."""

from __future__ import annotations

import dataclasses
import time
from http.cookies import SimpleCookie

from etl_craft.core.enums import Role
from etl_craft.operations.access.api_tokens import revoke_token
from etl_craft_ui.app import create_app
from etl_craft_ui.sessions import SESSION_COOKIE, UiSession, decode_session, encode_session
from tests.integration.ui.conftest import Ui, csrf_of, settings_of, sign_in


def session_cookie(set_cookie: list[str]) -> SimpleCookie:
    found = [header for header in set_cookie if header.startswith(f"{SESSION_COOKIE}=")]
    assert len(found) == 1, set_cookie
    cookie: SimpleCookie = SimpleCookie()
    cookie.load(found[0])
    return cookie


def test_a_valid_token_signs_in_and_the_page_names_it(ui: Ui) -> None:
    browser = ui.browser()
    answer = sign_in(browser, ui.tokens["operator"], "/pipelines")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/pipelines"
    page = browser.get("/")
    assert page.status_code == 200
    assert "operator_token" in page.text
    assert "(operator)" in page.text


def test_the_session_cookie_is_httponly_strict_and_not_secure_over_plain_http(ui: Ui) -> None:
    answer = sign_in(ui.browser(), ui.tokens["viewer"])
    morsel = session_cookie(answer.headers.get_list("set-cookie"))[SESSION_COOKIE]
    assert morsel["httponly"] is True
    assert morsel["samesite"].lower() == "strict"
    assert not morsel["secure"]
    assert 0 < int(morsel["max-age"]) <= ui.settings.session_seconds
    assert ui.tokens["viewer"] not in answer.headers["set-cookie"]


def test_the_session_cookie_is_secure_when_served_over_tls(ui: Ui) -> None:
    settings = settings_of(secure_cookies=True)
    browser = ui.browser(https=True, app=create_app(ui.ctx, settings))
    answer = sign_in(browser, ui.tokens["viewer"])
    assert answer.status_code == 303
    morsel = session_cookie(answer.headers.get_list("set-cookie"))[SESSION_COOKIE]
    assert morsel["secure"] is True
    assert browser.get("/").status_code == 200


def test_an_unknown_token_is_refused_with_the_reason_and_no_session(ui: Ui) -> None:
    browser = ui.browser()
    answer = sign_in(browser, "etlc_not-a-token-of-this-project")
    assert answer.status_code == 401
    assert "the bearer token is not known" in answer.text
    assert SESSION_COOKIE not in answer.headers.get("set-cookie", "")
    assert browser.get("/").status_code == 303


def test_a_revoked_token_ends_its_session(ui: Ui) -> None:
    token = ui.token("short_lived", "operator")
    browser = ui.browser()
    assert sign_in(browser, token).status_code == 303
    assert browser.get("/").status_code == 200
    revoke_token(ui.tester, "short_lived")
    answer = browser.get("/")
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/sign-in")


def test_without_a_session_a_page_redirects_to_sign_in_and_htmx_gets_401(ui: Ui) -> None:
    browser = ui.browser()
    page = browser.get("/", params={"x": "1"})
    assert page.status_code == 303
    assert page.headers["location"] == "/sign-in?next=%2F%3Fx%3D1"
    fragment = browser.get("/", headers={"HX-Request": "true"})
    assert fragment.status_code == 401
    assert fragment.headers["hx-redirect"].startswith("/sign-in")
    post = browser.post("/sign-out", data={})
    assert post.status_code == 401


def live_session(ui: Ui, role: Role) -> UiSession:
    """A session signed in through the form, as its cookie holds it."""
    browser = ui.browser()
    sign_in(browser, ui.tokens[role])
    value = browser.cookies.get(SESSION_COOKIE)
    assert value is not None
    session = decode_session(value, ui.settings.secret)
    assert session is not None
    return session


def expired_cookie(ui: Ui, role: Role, secret: str) -> str:
    past = int(time.time()) - 60
    return encode_session(dataclasses.replace(live_session(ui, role), expires_at=past), secret)


def test_an_expired_session_is_refused(ui: Ui) -> None:
    browser = ui.browser()
    browser.cookies.set(SESSION_COOKIE, expired_cookie(ui, Role.ADMIN, ui.settings.secret))
    answer = browser.get("/")
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/sign-in")
    refused = browser.post("/sign-out", data={"csrf_token": "c" * 43})
    assert refused.status_code == 401


def test_a_cookie_signed_with_another_secret_is_refused(ui: Ui) -> None:
    forged = live_session(ui, Role.ADMIN)
    browser = ui.browser()
    browser.cookies.set(SESSION_COOKIE, encode_session(forged, "another-secret-" * 4))
    assert browser.get("/").status_code == 303
    browser.cookies.set(SESSION_COOKIE, encode_session(forged, ui.settings.secret))
    assert browser.get("/").status_code == 200  # the same session, signed here, is let in


def test_a_state_change_without_the_csrf_token_is_refused(ui: Ui) -> None:
    refused = ui.post("viewer", "/sign-out", csrf=False)
    assert refused.status_code == 403
    assert "CSRF token" in refused.text
    wrong = ui.client("viewer").post("/sign-out", data={"csrf_token": "not-the-token"})
    assert wrong.status_code == 403
    assert ui.get("viewer", "/").status_code == 200  # still signed in


def test_the_csrf_header_htmx_sends_is_accepted(ui: Ui) -> None:
    browser = ui.browser()
    sign_in(browser, ui.tokens["viewer"])
    token = csrf_of(browser.get("/"))
    answer = browser.post("/sign-out", headers={"X-CSRF-Token": token})
    assert answer.status_code == 303


def test_sign_in_without_its_form_token_is_refused(ui: Ui) -> None:
    browser = ui.browser()
    browser.get("/sign-in")
    answer = browser.post("/sign-in", data={"token": ui.tokens["admin"], "next": "/"})
    assert answer.status_code == 403
    assert SESSION_COOKIE not in answer.headers.get("set-cookie", "")


def test_sign_out_ends_the_session(ui: Ui) -> None:
    browser = ui.browser()
    sign_in(browser, ui.tokens["operator"])
    token = csrf_of(browser.get("/"))
    answer = browser.post("/sign-out", data={"csrf_token": token})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/sign-in"
    cleared = session_cookie(answer.headers.get_list("set-cookie"))[SESSION_COOKIE]
    assert cleared.value == "" or int(cleared["max-age"] or 0) <= 0
    assert browser.get("/").status_code == 303


def test_sign_in_never_sends_the_browser_to_another_site(ui: Ui) -> None:
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example"):
        answer = sign_in(ui.browser(), ui.tokens["viewer"], target)
        assert answer.status_code == 303
        assert answer.headers["location"] == "/"


def test_health_needs_no_session_and_answers_carry_the_security_headers(ui: Ui) -> None:
    answer = ui.browser().get("/healthz")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok"}
    page = ui.browser().get("/sign-in")
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"
    assert "server" not in page.headers
    assert ui.browser().get("/readyz").status_code == 200


def test_static_files_are_served_without_a_session_and_may_be_cached(ui: Ui) -> None:
    browser = ui.browser()
    script = browser.get("/static/htmx.min.js")
    assert script.status_code == 200
    assert script.text.startswith("var htmx=")
    assert script.headers["cache-control"] == "public, max-age=3600"
    assert script.headers["x-content-type-options"] == "nosniff"
    assert browser.get("/static/htmx.LICENSE").status_code == 200
    assert browser.get("/").headers["cache-control"] == "no-store"
