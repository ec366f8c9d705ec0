"""A live `etl-craft-ui` process (the console entry point of `etl-craft ui`): it serves health
without a session, signs a browser in with a real token over HTTP, and shows the project."""

from __future__ import annotations

import http.cookiejar
import re
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest

from tests.fixtures.processes import BIN, clean_env, free_port, stop, wait_until_up
from tests.integration.ui.conftest import SECRET_KEY, Ui

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def live_url(ui: Ui, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = clean_env(
        ETL_CRAFT_ACTOR="live@tests",
        ETL_CRAFT_UI_SECRET=SECRET_KEY,
        ETL_CRAFT_UI_PORT=str(free_port()),
    )
    log = tmp_path_factory.mktemp("live-ui") / "ui.out"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(BIN / "etl-craft-ui")],  # finds craft-connector.yml from its folder
            cwd=ui.project.root,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{env['ETL_CRAFT_UI_PORT']}"
    try:
        wait_until_up(url, process)
        yield url
    finally:
        stop(process)


def test_a_browser_signs_in_over_http_and_sees_the_project(ui: Ui, live_url: str) -> None:
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with browser.open(f"{live_url}/") as answer:  # redirected to the sign-in form
        assert answer.url.startswith(f"{live_url}/sign-in")
        form = answer.read().decode()
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', form)
    assert csrf is not None
    fields = {"token": ui.tokens["operator"], "csrf_token": csrf[1], "next": "/pipelines"}
    body = urllib.parse.urlencode(fields).encode()
    with browser.open(f"{live_url}/sign-in", data=body) as answer:
        assert answer.url == f"{live_url}/pipelines"
        page = answer.read().decode()
        headers = answer.headers
    assert "operator_token" in page
    assert 'href="/pipelines/orders"' in page
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "server" not in {name.lower() for name in headers}
    assert [cookie.name for cookie in jar] == ["etl_craft_session"]
