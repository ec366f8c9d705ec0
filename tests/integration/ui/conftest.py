"""The web UI app of a project, in-process (FastAPI's TestClient), on both Engine DB dialects.

One project per module and dialect (tests.fixtures.served): pipeline ``orders`` has run once,
pipeline ``vault`` holds secrets. ``ui.client(role)`` is a browser signed in through the
sign-in form with that role's API token; ``ui.post(role, path, fields)`` submits a form with
the session's CSRF token, as the page's own form would.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx2 import Response

from etl_craft.operations.access.api_tokens import TokenRequest, create_token
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import cancel
from etl_craft_ui.app import create_app
from etl_craft_ui.settings import UiSettings
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.served import ROLES, served_project

SECRET_KEY = "a-fixed-signing-secret-of-the-ui-tests-0123456789"
_CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class Ui:
    """The UI of one project, its tokens by role, and a signed-in browser per role."""

    project: ProjectOnDisk
    ctx: OperationContext
    settings: UiSettings
    app: FastAPI
    tokens: dict[str, str] = field(default_factory=dict)
    clients: dict[str, TestClient] = field(default_factory=dict)

    def browser(self, *, https: bool = False, app: FastAPI | None = None) -> TestClient:
        """A browser of its own, signed out (of ``app``, else of the module's app)."""
        return TestClient(
            app or self.app,
            base_url="https://testserver" if https else "http://testserver",
            follow_redirects=False,
        )

    def client(self, role: str) -> TestClient:
        if role not in self.clients:
            browser = self.browser()
            answer = sign_in(browser, self.tokens[role])
            assert answer.status_code == 303, answer.text
            self.clients[role] = browser
        return self.clients[role]

    def get(self, role: str, path: str, **params: Any) -> Response:
        return self.client(role).get(path, params=params)

    def csrf(self, role: str) -> str:
        """The CSRF token a page of ``role``'s session carries."""
        return csrf_of(self.get(role, "/"))

    def post(
        self, role: str, path: str, fields: Mapping[str, str] | None = None, *, csrf: bool = True
    ) -> Response:
        data = dict(fields or {})
        if csrf:
            data["csrf_token"] = self.csrf(role)
        return self.client(role).post(path, data=data)

    def token(self, name: str, role: str, expires: str | None = None) -> str:
        return create_token(self.tester, TokenRequest(name, role, expires)).token

    @property
    def tester(self) -> OperationContext:
        return dataclasses.replace(self.ctx, actor=TESTER)

    def rows(self, sql: str, **params: Any) -> list[dict[str, Any]]:
        with self.project.engine.read() as conn:
            return [dict(row) for row in execute(conn, sql, **params).mappings()]

    def end_live_runs(self) -> None:
        for row in self.rows(
            "SELECT r.PIPELINE_RUN_ID AS id, p.PIPELINE_CODE AS code "
            "FROM AUD_PIPELINES_RUN_LOG r JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID "
            "WHERE r.STATUS IN ('QUEUED', 'IN-PROGRESS')"
        ):
            cancel(self.tester, str(row["code"]), int(row["id"]), "tests start from no live run")


def sign_in(browser: TestClient, token: str, next_path: str = "/") -> Response:
    """Sign ``browser`` in through the form, as a person would: its answer (303 when it worked)."""
    form = browser.get("/sign-in", params={"next": next_path})
    return browser.post(
        "/sign-in", data={"token": token, "csrf_token": csrf_of(form), "next": next_path}
    )


def csrf_of(page: Response) -> str:
    found = _CSRF_INPUT.search(page.text)
    assert found is not None, f"no CSRF token in the page: {page.text[:500]}"
    return found[1]


def settings_of(**changes: Any) -> UiSettings:
    return UiSettings(secret=SECRET_KEY, **changes)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def ui(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ui]:
    with served_project(request, tmp_path_factory, "ui") as (project, ctx):
        settings = settings_of()
        made = Ui(project, ctx, settings, create_app(ctx, settings))
        made.tokens = {role: made.token(f"{role}_token", role) for role in ROLES}
        yield made
        for browser in made.clients.values():
            browser.close()
