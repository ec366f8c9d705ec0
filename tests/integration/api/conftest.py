"""A project served by the API app in-process (FastAPI's TestClient), on both Engine DB dialects.

One project per module and dialect (tests.fixtures.served): pipeline ``orders`` (land ->
summary, and side) has run once in the foreground, so attempts and their logs exist; pipeline
``vault`` holds secrets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx2 import Response

from etl_craft.operations.access.api_tokens import TokenRequest, create_token
from etl_craft.operations.context import ContextRequest, OperationContext, build_context
from etl_craft.operations.interventions.actions import MarkRequest, cancel, mark
from etl_craft_api.app import create_app
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.served import ROLES, served_project

COUNTED = (
    "AUD_ACTIONS",
    "AUD_PIPELINES_RUN_LOG",
    "AUD_TASK_RUN_LOG",
    "AUD_TASK_ATTEMPTS",
    "AUD_RUN_INTERVENTIONS",
    "AUD_PIPELINE_PAUSES",
    "AUD_METADATA_CHANGES",
    "CFG_API_TOKENS",
    "CFG_USERS",
)


@dataclass
class Api:
    """The app of one project, its tokens by role, and reads of what requests left behind."""

    project: ProjectOnDisk
    ctx: OperationContext
    client: TestClient
    tokens: dict[str, str] = field(default_factory=dict)

    def call(
        self, method: str, path: str, role: str | None = "viewer", body: Any = None
    ) -> Response:
        headers = {} if role is None else {"Authorization": f"Bearer {self.tokens[role]}"}
        return self.client.request(method, path, headers=headers, json=body)

    def call_with(self, token: str, method: str, path: str, body: Any = None) -> Response:
        return self.client.request(
            method, path, headers={"Authorization": f"Bearer {token}"}, json=body
        )

    def token(self, name: str, role: str, expires: str | None = None) -> str:
        return create_token(self.tester, TokenRequest(name, role, expires)).token

    @property
    def tester(self) -> OperationContext:
        return dataclasses.replace(self.ctx, actor=TESTER)

    def counts(self) -> dict[str, int]:
        with self.project.engine.read() as conn:
            return {
                table: int(execute(conn, f"SELECT count(*) FROM {table}").scalar_one())
                for table in COUNTED
            }

    def rows(self, sql: str, **params: Any) -> list[dict[str, Any]]:
        with self.project.engine.read() as conn:
            return [dict(row) for row in execute(conn, sql, **params).mappings()]

    def end_live_runs(self) -> None:
        for row in self.rows(
            "SELECT PIPELINE_RUN_ID AS id FROM AUD_PIPELINES_RUN_LOG "
            "WHERE STATUS IN ('QUEUED', 'IN-PROGRESS')"
        ):
            cancel(self.tester, "orders", int(row["id"]), "tests start from no live run")

    def live_run(self) -> int:
        """A new admitted (IN-PROGRESS) run of orders, and no other live run."""
        self.end_live_runs()
        return self.project.new_run("orders", run_key=f"manual:{len(self.rows(_RUNS))}")

    def ended_run(self) -> int:
        run_id = self.live_run()
        cancel(self.tester, "orders", run_id, "an ended run for the test")
        return run_id

    def settled_task(self, task: str = "side") -> int:
        """A live run whose ``task`` was marked SUCCESS by an operator, ready to rerun."""
        run_id = self.live_run()
        mark(self.tester, MarkRequest("orders", "SUCCESS", "settled for the test", run_id, task))
        return run_id

    def attempt_with_log(self) -> int:
        found = self.rows(
            "SELECT min(ATTEMPT_ID) AS id FROM AUD_TASK_ATTEMPTS WHERE LOG_PATH IS NOT NULL"
        )
        return int(found[0]["id"])


_RUNS = "SELECT PIPELINE_RUN_ID FROM AUD_PIPELINES_RUN_LOG"


def problem_of(response: Response) -> dict[str, Any]:
    assert response.headers["content-type"].startswith("application/problem+json"), response.text
    found = response.json()
    assert isinstance(found, dict)
    assert {"type", "title", "status", "detail"} <= found.keys()
    assert found["status"] == response.status_code
    assert "Traceback" not in response.text
    assert "SELECT" not in response.text
    return found


def served(project: ProjectOnDisk) -> Api:
    ctx = build_context(ContextRequest(config=project.config, cwd=project.root))
    api = Api(project, ctx, TestClient(create_app(ctx)))
    api.tokens = {role: api.token(f"{role}_token", role) for role in ROLES}
    return api


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def api(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    with served_project(request, tmp_path_factory, "api") as (project, ctx):
        made = Api(project, ctx, TestClient(create_app(ctx)))
        made.tokens = {role: made.token(f"{role}_token", role) for role in ROLES}
        yield made
        made.client.close()
