"""A project served by the API app in-process (FastAPI's TestClient), on both Engine DB dialects.

One project per module and dialect: pipeline ``orders`` (land -> summary, and side) has run
once in the foreground, so attempts and their logs exist; pipeline ``vault`` holds secrets.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx2 import Response

from etl_craft.operations.context import ContextRequest, OperationContext, build_context
from etl_craft.operations.interventions import MarkRequest, cancel, mark
from etl_craft.operations.runs import RunRequest, run_pipeline
from etl_craft.operations.tokens import TokenRequest, create_token
from etl_craft_api.app import create_app
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.running.test_supervisor_sql import CHAIN

ROLES = ("viewer", "operator", "admin")
SECRET_TOKEN_VALUE = "tok-4242-very-secret"
SECRET_PASSWORD = "hunter2-input-password"
SECRET_PIPELINE_PASSWORD = "pipeline-pw-31337"
SECRETS = (SECRET_TOKEN_VALUE, SECRET_PASSWORD, SECRET_PIPELINE_PASSWORD)
VAULT = f"""
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'vault' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'fetch', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'vault';
INSERT INTO CFG_PIPELINE_PARAMETERS (PIPELINE_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT PIPELINE_ID, 'DB_PASSWORD', '{SECRET_PIPELINE_PASSWORD}'
  FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'vault';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SCRIPT', 'fetch.py' FROM CFG_TASKS WHERE TASK_CODE = 'fetch';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'Api_Token', '{SECRET_TOKEN_VALUE}' FROM CFG_TASKS WHERE TASK_CODE = 'fetch';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'INPUT_PARAMS', '{{"user": "etl", "password": "{SECRET_PASSWORD}"}}'
  FROM CFG_TASKS WHERE TASK_CODE = 'fetch';
"""
FETCH = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    return ScriptResult(row_count=0)
"""
COUNTED = (
    "AUD_ACTIONS",
    "AUD_PIPELINES_RUN_LOG",
    "AUD_TASK_RUN_LOG",
    "AUD_TASK_ATTEMPTS",
    "AUD_RUN_INTERVENTIONS",
    "AUD_PIPELINE_PAUSES",
    "AUD_METADATA_CHANGES",
    "CFG_API_TOKENS",
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
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_engine_url"))
    with pytest.MonkeyPatch.context() as env:
        for key in [key for key in os.environ if key.startswith("ETL_CRAFT_")]:
            env.delenv(key)
        env.setenv("ETL_CRAFT_ACTOR", TESTER.name)
        env.setenv("ETL_CRAFT_POLL_SECONDS", "0.2")
        project = make_project(tmp_path_factory.mktemp("api") / "etl-craft", url)
        project.migrate("0001_orders.sql", CHAIN)
        project.migrate("0002_vault.sql", VAULT)
        scripts = project.root / "ingestion_scripts"
        scripts.mkdir(exist_ok=True)
        (scripts / "fetch.py").write_text(FETCH)
        made = served(project)
        view = run_pipeline(made.tester, RunRequest("orders"))
        assert view.status.value == "SUCCESS", json.dumps(str(view))
        yield made
        made.client.close()
        made.ctx.close()
        project.engine.dispose()


def log_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*.log") if path.is_file()]
