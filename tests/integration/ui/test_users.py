"""Users sign in with their name and password; what they do is recorded under their name; a
disabled user or a new role takes effect at their next request, in every UI process."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from httpx2 import Response

from etl_craft.config.sections import Auth
from etl_craft.core.errors import AuthenticationError
from etl_craft.operations.access.users import (
    OidcClaims,
    UserRequest,
    add_user,
    disable_user,
    enable_user,
    oidc_user,
    set_user_role,
)
from etl_craft_ui.app import create_app
from tests.integration.ui.conftest import Ui, csrf_of

PASSWORD = "a password long enough"
SIGN_INS = (
    "SELECT ACCOUNT AS account, OUTCOME AS outcome, REASON AS reason FROM AUD_UI_SIGN_INS "
    "WHERE CLIENT = :client ORDER BY SIGN_IN_ID"
)


def sign_in_as(browser: TestClient, name: str, password: str) -> Response:
    form = browser.get("/sign-in")
    fields = {"user_name": name, "password": password, "csrf_token": csrf_of(form), "next": "/"}
    return browser.post("/sign-in", data=fields)


def browser_at(ui: Ui, client: str) -> TestClient:
    return TestClient(ui.app, client=(client, 50000), follow_redirects=False)


def pause(ui: Ui, browser: TestClient, reason: str) -> Response:
    csrf = csrf_of(browser.get("/"))
    return browser.post("/pipelines/orders/pause", data={"reason": reason, "csrf_token": csrf})


def resume(ui: Ui, browser: TestClient) -> None:
    csrf = csrf_of(browser.get("/"))
    browser.post("/pipelines/orders/resume", data={"csrf_token": csrf})


@pytest.fixture
def operator(ui: Ui, request: pytest.FixtureRequest) -> str:
    name = f"ada.{request.node.name.split('[')[0][-20:].replace('_', '-')}"
    add_user(ui.tester, UserRequest(name, "operator", PASSWORD, "Ada Lovelace", "ada@example.com"))
    return name


def test_a_user_signs_in_with_a_password_and_acts_under_their_name(ui: Ui, operator: str) -> None:
    browser = ui.browser()
    answer = sign_in_as(browser, operator, PASSWORD)
    assert answer.status_code == 303, answer.text
    home = browser.get("/")
    assert operator in home.text

    paused = pause(ui, browser, "paused by a user")
    assert paused.status_code in (200, 303), paused.text
    [row] = ui.rows(
        "SELECT s.PAUSED_BY AS paused_by FROM AUD_PIPELINE_PAUSES s "
        "WHERE s.REASON = 'paused by a user'"
    )
    resume(ui, browser)
    assert row["paused_by"] == operator
    [stored] = ui.rows("SELECT PASSWORD_HASH AS h FROM CFG_USERS WHERE USER_NAME = :n", n=operator)
    assert str(stored["h"]).startswith("scrypt$16384$8$1$")
    assert PASSWORD not in str(stored["h"])


def test_a_wrong_password_is_refused_and_recorded_against_the_user(ui: Ui, operator: str) -> None:
    browser = browser_at(ui, "10.0.9.1")
    wrong = sign_in_as(browser, operator, "not the password at all")
    unknown = sign_in_as(browser, "nobody.here", PASSWORD)

    assert (wrong.status_code, unknown.status_code) == (401, 401)
    assert "the user name or the password is wrong" in wrong.text
    assert "the user name or the password is wrong" in unknown.text  # no hint who exists
    rows = ui.rows(SIGN_INS, client="10.0.9.1")
    assert [(row["account"], row["outcome"]) for row in rows] == [
        (operator, "FAILED"),
        (None, "FAILED"),
    ]


def test_a_disabled_user_is_refused_at_their_next_request(ui: Ui, operator: str) -> None:
    browser = ui.browser()
    assert sign_in_as(browser, operator, PASSWORD).status_code == 303
    other_process = TestClient(create_app(ui.ctx, ui.settings), follow_redirects=False)
    other_process.cookies = browser.cookies
    assert browser.get("/pipelines").status_code == 200

    disable_user(ui.tester, operator)
    page = browser.get("/pipelines")
    elsewhere = other_process.get("/pipelines")
    again = sign_in_as(ui.browser(), operator, PASSWORD)

    assert page.status_code == 303
    assert page.headers["location"].startswith("/sign-in")
    assert elsewhere.status_code == 303
    assert again.status_code == 401
    assert f"user {operator} is disabled" in again.text
    enable_user(ui.tester, operator)
    assert sign_in_as(ui.browser(), operator, PASSWORD).status_code == 303


def test_a_new_role_takes_effect_at_the_next_request(ui: Ui, operator: str) -> None:
    browser = ui.browser()
    assert sign_in_as(browser, operator, PASSWORD).status_code == 303
    csrf = csrf_of(browser.get("/"))

    set_user_role(ui.tester, operator, "viewer")
    refused = browser.post(
        "/pipelines/orders/pause", data={"reason": "no longer", "csrf_token": csrf}
    )

    assert refused.status_code == 403
    assert f"{operator} has role viewer; this request needs operator" in refused.text
    assert ui.rows("SELECT 1 AS x FROM AUD_PIPELINE_PAUSES WHERE REASON = 'no longer'") == []


AUTH = Auth(
    oidc_issuer="https://login.example.com",
    oidc_client_id="etl-craft-ui",
    oidc_default_role="viewer",
    oidc_group_roles={"etl-admins": "admin", "etl-developers": "developer"},
    oidc_groups_claim="groups",
    oidc_scopes="openid profile email groups",
    oidc_redirect_url=None,
)


def claims(name: str, *groups: str) -> OidcClaims:
    return OidcClaims(f"sub-{name}", name, f"{name}@example.com", name.title(), groups)


def test_an_openid_user_is_created_once_and_takes_the_highest_role_of_their_groups(
    ui: Ui,
) -> None:
    first = oidc_user(ui.ctx, AUTH, claims("grace.h", "staff"))
    again = oidc_user(ui.ctx, AUTH, claims("grace.h", "etl-developers", "etl-admins"))

    assert first.identity.role == "viewer"  # no group of hers is mapped: the default role
    assert again.user_id == first.user_id
    assert again.identity.role == "admin"
    [row] = ui.rows(
        "SELECT SOURCE AS source, PASSWORD_HASH AS h, EMAIL AS email FROM CFG_USERS "
        "WHERE USER_NAME = 'grace.h'"
    )
    assert row == {"source": "oidc", "h": None, "email": "grace.h@example.com"}


def test_an_openid_sign_in_never_takes_over_a_password_user(ui: Ui) -> None:
    add_user(ui.tester, UserRequest("linus.t", "viewer", PASSWORD))

    with pytest.raises(AuthenticationError, match="user linus.t signs in with a password"):
        oidc_user(ui.ctx, AUTH, claims("linus.t", "etl-admins"))
    assert ui.rows("SELECT ROLE AS role FROM CFG_USERS WHERE USER_NAME = 'linus.t'") == [
        {"role": "viewer"}
    ]
