"""The installed etl-craft console script, run as a real process in a fresh project folder."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from etl_craft.enginedb.connection import normalize_url
from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.processes import ETL_CRAFT, clean_env

PROJECT_CODE = "demo"
CONNECTOR = f"""\
Engine:
  path: engine.db
Warehouse:
  type: duckdb
  path: warehouse.duckdb
Orchestration:
  project: {PROJECT_CODE}
"""
PIPELINE_MIGRATION = f"""\
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, DESCRIPTION)
SELECT PROJECT_ID, 'orders', 'loads the orders'
  FROM CFG_PROJECTS WHERE PROJECT_CODE = '{PROJECT_CODE}';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'load_orders', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT t.TASK_ID, x.N, x.V FROM CFG_TASKS t JOIN (
  SELECT 'ACTION' AS N, 'APPEND_TABLE' AS V
  UNION ALL SELECT 'TARGET_OBJECT', 'lnd.orders'
  UNION ALL SELECT 'SOURCE_SQL', 'SELECT 1 AS order_id'
) x ON 1 = 1 WHERE t.TASK_CODE = 'load_orders';
"""

# Two alert tasks that each wait for the other: valid tasks in a graph that cannot be built.
RING = f"""\
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'ring' FROM CFG_PROJECTS WHERE PROJECT_CODE = '{PROJECT_CODE}';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'first', 'EMAIL_ALERT' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'ring';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'second', 'EMAIL_ALERT' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'ring';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT t.TASK_ID, x.N, x.V FROM CFG_TASKS t JOIN (
  SELECT 'FLAVOUR' AS N, 'FAILURE' AS V UNION ALL SELECT 'RECIPIENTS', 'ops@example.com'
) x ON 1 = 1 WHERE t.TASK_CODE IN ('first', 'second');
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE (d.TASK_CODE, u.TASK_CODE) IN (('first', 'second'), ('second', 'first'));
"""


@dataclass
class Site:
    """A project folder and the Engine DB its commands use (the file's, or a PostgreSQL one)."""

    root: Path
    dialect: str
    engine_url: str
    env: dict[str, str] = field(default_factory=dict)

    @property
    def project(self) -> Path:
        return self.root / "etl-craft"

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, cwd=self.root, env={**self.env, **env})

    def json(self, *args: str, **env: str) -> tuple[int, dict[str, Any]]:
        done = self.run("--format", "json", *args, **env)
        return done.returncode, json.loads(done.stdout)

    def write_migration(self, name: str, sql: str) -> Path:
        folder = self.project / "migrations"
        folder.mkdir(exist_ok=True)
        path = folder / name
        path.write_text(sql)
        return path

    def execute(self, sql: str) -> None:
        """Run DDL around etl-craft, as someone with the file or the login would."""
        engine = create_engine(normalize_url(self.engine_url))
        try:
            with engine.begin() as conn:
                conn.execute(text(sql))
        finally:
            engine.dispose()

    def query(self, sql: str, **params: object) -> list[dict[str, Any]]:
        engine = create_engine(normalize_url(self.engine_url))
        try:
            with engine.connect() as conn:
                return [dict(row) for row in conn.execute(text(sql), params).mappings()]
        finally:
            engine.dispose()


def run_cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # The outer environment's ETL_CRAFT_* must not leak into what a test sets up.
    clean = clean_env()
    return subprocess.run(
        [str(ETL_CRAFT), *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def write_project(root: Path) -> Path:
    project = root / "etl-craft"
    project.mkdir(parents=True)
    (project / "craft-connector.yml").write_text(CONNECTOR)
    return project


@pytest.fixture
def sqlite_site(tmp_path: Path) -> Site:
    project = write_project(tmp_path)
    return Site(tmp_path, "sqlite", f"sqlite:///{project / 'engine.db'}")


@pytest.fixture
def pg_site(tmp_path: Path, pg_admin_url: str) -> Iterator[Site]:
    write_project(tmp_path)
    name = unique_name("etl_craft_cli")
    url = create_database(pg_admin_url, name)
    yield Site(tmp_path, "postgresql", url, {"ETL_CRAFT_ENGINE_URL": url})
    drop_database(pg_admin_url, name)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def site(request: pytest.FixtureRequest) -> Site:
    """An empty Engine DB, once per dialect, behind a fresh project."""
    fixture = "sqlite_site" if request.param == "sqlite" else "pg_site"
    found = request.getfixturevalue(fixture)
    assert isinstance(found, Site)
    return found


def checks_by_name(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in document["checks"]}
