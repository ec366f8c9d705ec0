"""A pipeline whose task connects to a PostgreSQL warehouse with a password from a secrets
provider, and prints it: run, rotated in the provider, run again. The task used each password
in turn, and neither shows in a log, an Engine DB row, an API answer, a web UI page or the
processes' output."""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from etl_craft.config.connector import load_connector
from etl_craft.core.actor import SYSTEM
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.migrations import initialize
from etl_craft.operations.runs.foreground import RunRequest, run_pipeline
from etl_craft_ui.app import create_app
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.api.conftest import served
from tests.integration.secrets.conftest import Rotating
from tests.integration.security.conftest import captured_descriptors, leaks
from tests.integration.ui.conftest import Ui, settings_of

SCRIPT = """
import hashlib

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    settings = context.warehouse_settings
    print("printed:", settings.url)
    context.log.info("logged: %s", settings.url)
    with context.warehouse() as warehouse:
        used = warehouse._conn.info.password
        digest = hashlib.sha256(used.encode()).hexdigest()
        warehouse.execute("record", "INSERT INTO public.used (digest) VALUES (%s)", [digest])
    return ScriptResult(row_count=1)
"""

PIPELINE = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'rotation' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'connect', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'rotation';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SCRIPT', 'connect.py' FROM CFG_TASKS WHERE TASK_CODE = 'connect';
"""


def _project(root: Path, rotating: Rotating, warehouse_url: str) -> ProjectOnDisk:
    config = rotating.write_connector(root, warehouse_url, cache_seconds=0)
    (root / "ingestion_scripts").mkdir()
    (root / "ingestion_scripts" / "connect.py").write_text(SCRIPT)
    connector = load_connector(config, profile=None)
    db = EngineDB(connector.engine_url)
    initialize(db, SYSTEM, project_code="default", timezone="UTC")
    project = ProjectOnDisk(root, connector, db)
    project.migrate("0001_rotation.sql", textwrap.dedent(PIPELINE))
    return project


def _digest(password: str) -> str:
    return hashlib.sha256(password.encode()).hexdigest()


def _engine_rows(project: ProjectOnDisk) -> dict[str, str]:
    engine = sa.create_engine(project.connector.engine_url)
    try:
        with engine.connect() as conn:
            return {
                table: json.dumps(
                    [list(row) for row in conn.execute(sa.text(f"SELECT * FROM {table}"))],
                    default=str,
                )
                for table in sa.inspect(conn).get_table_names()
            }
    finally:
        engine.dispose()


def test_a_rotated_password_is_used_by_the_next_run_and_shown_nowhere(
    rotating: Rotating, pg_warehouse_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ETL_CRAFT_POLL_SECONDS", "0.2")
    passwords = (f"Rot1{rotating.kind}-first-8842", f"Rot2{rotating.kind}-second-5531")
    with psycopg.connect(pg_warehouse_url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS public.used")
        conn.execute("CREATE TABLE public.used (id serial PRIMARY KEY, digest text NOT NULL)")
    rotating.put(passwords[0])
    project = _project(tmp_path / "etl-craft", rotating, pg_warehouse_url)
    api = served(project)
    runs = []
    with captured_descriptors(tmp_path / "output.txt"):
        for password in passwords:
            rotating.put(password)
            runs.append(run_pipeline(api.tester, RunRequest("rotation")))
    output = (tmp_path / "output.txt").read_text(errors="replace")
    assert [run.status.value for run in runs] == ["SUCCESS", "SUCCESS"], output

    with psycopg.connect(pg_warehouse_url) as conn:
        used = [row[0] for row in conn.execute("SELECT digest FROM public.used ORDER BY id")]
    assert used == [_digest(password) for password in passwords]

    logs = [path for path in sorted((project.root / "logs").rglob("*")) if path.is_file()]
    assert len(logs) == 2
    for path in logs:
        text = path.read_text(errors="replace")
        assert "printed: postgresql://" in text
        assert leaks(text, passwords) == [], path
    tables = _engine_rows(project)
    assert {"AUD_TASK_ATTEMPTS", "AUD_TASK_RUN_LOG", "CFG_TASKS"} <= {t.upper() for t in tables}
    for table, rows in tables.items():
        assert leaks(rows, passwords) == [], table
    for run in runs:
        for route in (f"/api/v1/runs/{run.run_id}", f"/api/v1/runs/{run.run_id}/tasks"):
            answer = api.call("GET", route, "admin")
            assert answer.status_code == 200, (route, answer.text)
            assert leaks(answer.text, passwords) == [], route
    settings = settings_of()
    ui = Ui(project, api.ctx, settings, create_app(api.ctx, settings))
    ui.tokens = {"admin": ui.token("sweep_admin", "admin")}
    attempts = [row["id"] for row in api.rows("SELECT ATTEMPT_ID AS id FROM AUD_TASK_ATTEMPTS")]
    pages = [*(f"/runs/{run.run_id}" for run in runs), *(f"/attempts/{a}" for a in attempts)]
    for page in pages:
        shown = ui.get("admin", page)
        assert shown.status_code == 200, (page, shown.text)
        assert leaks(shown.text, passwords) == [], page
    for browser in ui.clients.values():
        browser.close()
    assert leaks(output, passwords) == []
    api.client.close()
    api.ctx.close()
    project.engine.dispose()
