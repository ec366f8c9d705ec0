"""Single sign-on in Debian's chromium against a real OpenID provider (npm's oidc-provider,
started by the test): a live `etl-craft-ui` sends the browser to the provider, the person
signs in on its login form, and comes back signed in as a user created at that first sign-in,
with the role their groups claim gives; signing out ends the session; a user an admin disables
(`etl-craft users disable`) is refused at their next request and at their next sign-in. Each
step leaves a screenshot under ${ETL_CRAFT_TEST_ARTIFACTS:-<repo>/.artifacts}/browser/."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_catalog_browser import ARTIFACTS, CHROMIUM, _require_chromium
from tests.fixtures.metadata import execute
from tests.fixtures.oidc import OidcProvider, oidc_provider
from tests.fixtures.processes import BIN, clean_env, free_port, stop, wait_until_up
from tests.fixtures.projects import ProjectOnDisk, make_project

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
SECRET_KEY = "a-fixed-signing-secret-of-the-sso-tests-0123456789"
WAIT_MS = 30_000
ACCOUNTS: dict[str, dict[str, object]] = {
    "ada": {
        "preferred_username": "ada",
        "email": "ada@example.com",
        "name": "Ada Lovelace",
        "groups": ["staff", "etl-developers"],
    },
    "bob": {"preferred_username": "bob", "email": "bob@example.com", "groups": ["staff"]},
}


@dataclass(frozen=True)
class Sso:
    url: str
    project: ProjectOnDisk
    provider: OidcProvider
    shots: Path

    def users(self) -> dict[str, tuple[str, str, str]]:
        """Each user's role, source and disabled flag, from the Engine DB."""
        with self.project.engine.read() as conn:
            found = execute(conn, "SELECT USER_NAME, ROLE, SOURCE, DISABLED_FLAG FROM CFG_USERS")
        return {str(row[0]): (str(row[1]), str(row[2]), str(row[3])) for row in found}


@pytest.fixture(scope="module")
def sso(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sso]:
    _require_chromium()
    folder = tmp_path_factory.mktemp("sso")
    project = make_project(folder / "etl-craft")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with oidc_provider(folder, f"{url}/sign-in/oidc/callback", ACCOUNTS) as provider:
        with (project.root / "craft-connector.yml").open("a") as config:
            config.write(
                "Auth:\n"
                f"  oidc_issuer: {provider.issuer}\n"
                f"  oidc_client_id: {provider.client_id}\n"
                "  oidc_client_secret_variable: TEST_OIDC_CLIENT_SECRET\n"
                "  oidc_scopes: openid profile email groups\n"
                "  oidc_group_roles:\n"
                "    etl-developers: developer\n"
                "    etl-admins: admin\n"
            )
        env = clean_env(
            ETL_CRAFT_ACTOR="sso@tests",
            ETL_CRAFT_UI_SECRET=SECRET_KEY,
            ETL_CRAFT_UI_PORT=str(port),
            TEST_OIDC_CLIENT_SECRET=provider.client_secret,
        )
        with (folder / "ui.out").open("wb") as sink:
            ui = subprocess.Popen(
                [str(BIN / "etl-craft-ui")],
                cwd=project.root,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        try:
            wait_until_up(url, ui)
            shots = ARTIFACTS / "browser"
            shots.mkdir(parents=True, exist_ok=True)
            yield Sso(url, project, provider, shots)
        finally:
            stop(ui)


@pytest.fixture
def page(sso: Sso) -> Iterator[Any]:
    with playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM))
        context = browser.new_context(viewport={"width": 1300, "height": 900})
        context.set_default_timeout(WAIT_MS)
        try:
            yield context.new_page()
        finally:
            browser.close()


def shoot(sso: Sso, page: Any, step: str) -> None:
    page.screenshot(path=sso.shots / f"sso-{step}.png", full_page=True)


def through_the_provider(sso: Sso, page: Any, login: str, step: str) -> None:
    """From the sign-in form, through the provider's login and consent, back to the UI."""
    page.goto(f"{sso.url}/pipelines")
    page.wait_for_url(re.compile(r"/sign-in"))
    shoot(sso, page, f"{step}-form")
    page.click("#single-sign-on")
    page.wait_for_url(re.compile(re.escape(sso.provider.issuer)))
    page.fill("input[name=login]", login)
    page.fill("input[name=password]", "the provider's development form takes any")
    shoot(sso, page, f"{step}-provider")
    page.click("button[type=submit]")
    if page.url.startswith(sso.provider.issuer):  # its consent form, at a first sign-in
        page.click("button[type=submit]")


def test_a_person_signs_in_through_the_provider_with_the_role_of_their_group(
    sso: Sso, page: Any
) -> None:
    through_the_provider(sso, page, "ada", "ada")

    page.wait_for_url(f"{sso.url}/pipelines")
    expect(page.locator("header .who")).to_contain_text("ada")
    shoot(sso, page, "ada-signed-in")
    assert sso.users()["ada"] == ("developer", "oidc", "N")
    page.goto(f"{sso.url}/metadata")
    expect(page.get_by_role("link", name="Add a pipeline")).to_be_visible()

    page.click("header .who button[type=submit]")  # sign out
    page.wait_for_url(re.compile(r"/sign-in"))
    page.goto(f"{sso.url}/pipelines")
    page.wait_for_url(re.compile(r"/sign-in"))
    shoot(sso, page, "ada-signed-out")


def test_a_user_an_admin_disables_is_refused_at_their_next_request(sso: Sso, page: Any) -> None:
    through_the_provider(sso, page, "bob", "bob")
    page.wait_for_url(f"{sso.url}/pipelines")
    assert sso.users()["bob"] == ("viewer", "oidc", "N")  # no group of bob's is mapped
    page.goto(f"{sso.url}/metadata")
    expect(page.get_by_role("link", name="Add a pipeline")).to_have_count(0)

    disabled = subprocess.run(
        [str(BIN / "etl-craft"), "users", "disable", "--name", "bob"],
        cwd=sso.project.root,
        env=clean_env(ETL_CRAFT_ACTOR="admin@tests"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert disabled.returncode == 0, disabled.stderr
    page.goto(f"{sso.url}/pipelines")
    page.wait_for_url(re.compile(r"/sign-in"))

    page.click("#single-sign-on")  # the provider still knows bob: straight back, refused
    expect(page.locator("main")).to_contain_text("user bob is disabled")
    shoot(sso, page, "bob-disabled")
    assert sso.users()["bob"] == ("viewer", "oidc", "Y")
