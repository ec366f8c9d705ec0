"""Several projects in one PostgreSQL Engine DB, served by one overseer and one worker.

Each project has its own folder, DuckDB warehouse and published bundle; the overseer and the
worker run from a host folder that holds no project's files, only a craft-connector.yml naming
the Engine DB and the Artifacts store. A bundle's relative data paths resolve against the
worker's folder, so each project's DuckDB file lies there under its own name.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pytest

from etl_craft.cli.main import run as run_cli
from etl_craft.config.connector import load_connector
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.context import ContextRequest, build_context
from etl_craft.operations.runs.triggers import TriggerRequest, trigger_run
from tests.chaos.harness import QUICK, rows
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.worker.queueing import WAIT

RUN_DATE = date(2026, 12, 1)


TIMEZONES = {"beta": "Asia/Tokyo"}  # the others: UTC


def connector_yml(code: str, store: str) -> str:
    return (
        "Engine:\n  url: ${TEST_ENGINE_URL}\n"
        f"Warehouse:\n  type: duckdb\n  path: warehouse-{code}.duckdb\n"
        f"Orchestration:\n  project: {code}\n  timezone: {TIMEZONES.get(code, 'UTC')}\n"
        f"Artifacts:\n  store: {store}\n"
    )


def load_pipeline(code: str) -> str:
    """Pipeline load (the same code in every project): one SQL task writing dm.who."""
    return f"""
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'load' FROM CFG_PROJECTS WHERE PROJECT_CODE = '{code}';
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'only_{code}' FROM CFG_PROJECTS WHERE PROJECT_CODE = '{code}';
{sql_task(code, "load", "land", "dm.who", "who.sql")}
"""


def task(project: str, pipeline: str, code: str, handler: str, params: dict[str, str]) -> str:
    """Statements adding task ``code`` with ``params`` to ``pipeline`` of ``project``."""
    values = " UNION ALL ".join(
        f"SELECT '{name}' AS N, '{value}' AS V" for name, value in params.items()
    )
    return f"""
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT p.PIPELINE_ID, '{code}', '{handler}' FROM CFG_PIPELINES p
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
 WHERE j.PROJECT_CODE = '{project}' AND p.PIPELINE_CODE = '{pipeline}';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT k.TASK_ID, x.N, x.V FROM CFG_TASKS k
  JOIN CFG_PIPELINES p ON p.PIPELINE_ID = k.PIPELINE_ID
  JOIN CFG_PROJECTS j ON j.PROJECT_ID = p.PROJECT_ID
  JOIN ({values}) x ON 1 = 1
 WHERE j.PROJECT_CODE = '{project}' AND p.PIPELINE_CODE = '{pipeline}'
   AND k.TASK_CODE = '{code}';
"""


def sql_task(project: str, pipeline: str, code: str, target: str, sql_file: str) -> str:
    params = {"ACTION": "CREATE_TABLE", "TARGET_OBJECT": target, "SOURCE_SQL_FILE": sql_file}
    return task(project, pipeline, code, "SQL", params)


def python_task(project: str, pipeline: str, code: str, script: str, params: str) -> str:
    return task(project, pipeline, code, "PYTHON", {"SCRIPT": script, "INPUT_PARAMS": params})


@dataclass
class Cluster:
    engine: EngineDB
    projects: dict[str, ProjectOnDisk]
    processes: Processes
    host: Path
    capsys: pytest.CaptureFixture[str] | None = None

    def cli(self, project: str, *args: str) -> tuple[int, str, str]:
        """etl-craft in this process, from ``project``'s craft-connector.yml."""
        assert self.capsys is not None
        self.capsys.readouterr()
        code = run_cli(["--config", str(self.projects[project].config), *args])
        out, err = self.capsys.readouterr()
        return code, out, err

    def cli_json(self, project: str, *args: str) -> Any:
        code, out, err = self.cli(project, "--format", "json", *args)
        assert code == 0, (err, out)
        return json.loads(out)

    def trigger(self, acting_from: str, project: str, pipeline: str, key: str) -> int:
        """A run of ``project``'s ``pipeline`` queued for the overseer, as the API queues it,
        by a process whose own configuration is ``acting_from``'s."""
        ctx = build_context(ContextRequest(self.projects[acting_from].config, project=project))
        try:
            return trigger_run(ctx, TriggerRequest(pipeline, RUN_DATE, f"manual:{key}")).run_id
        finally:
            ctx.close()

    def status(self, run_id: int) -> str:
        project = next(iter(self.projects.values()))
        [(status,)] = rows(
            project, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r", r=run_id
        )
        return str(status)

    def wait_ended(self, run_id: int, timeout: float = 120) -> str:
        wait_for(
            lambda: self.status(run_id) not in ("QUEUED", "IN-PROGRESS"),
            f"run {run_id} to end",
            timeout,
        )
        return self.status(run_id)

    def warehouse(self, project: str, sql: str) -> list[tuple[Any, ...]]:
        path = self.host / f"warehouse-{project}.duckdb"
        with duckdb.connect(str(path), read_only=True) as connection:
            return connection.execute(sql).fetchall()


def write_project(root: Path, code: str, url: str, store: str, extra_sql: str = "") -> None:
    (root / "migrations").mkdir(parents=True)
    (root / "sql_files").mkdir()
    (root / "ingestion_scripts").mkdir()
    (root / "craft-connector.yml").write_text(connector_yml(code, store))
    (root / ".env").write_text(f"TEST_ENGINE_URL={url}\n")
    (root / "sql_files" / "who.sql").write_text(f"SELECT '{code}' AS project, 1 AS n")
    (root / "ingestion_scripts" / "wait.py").write_text(WAIT)
    (root / "ingestion_scripts" / "quick.py").write_text(QUICK)
    (root / "migrations" / "0001_load.sql").write_text(load_pipeline(code) + extra_sql)


@contextmanager
def clean_environment() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for key in [key for key in os.environ if key.startswith("ETL_CRAFT_")]:
            patch.delenv(key)
        patch.setenv("ETL_CRAFT_ACTOR", "ops@tests")
        yield


def write_host(root: Path, url: str, store: str) -> None:
    """A host's folder: the Engine DB and the Artifacts store, no project files (its own
    Warehouse is one no project's run uses)."""
    root.mkdir()
    (root / "craft-connector.yml").write_text(
        "Engine:\n  url: ${TEST_ENGINE_URL}\n"
        "Warehouse:\n  type: duckdb\n  path: host.duckdb\n"
        f"Artifacts:\n  store: {store}\n"
    )
    (root / ".env").write_text(f"TEST_ENGINE_URL={url}\n")


def open_project(root: Path, engine: EngineDB) -> ProjectOnDisk:
    connector = load_connector(root / "craft-connector.yml", profile=None)
    return ProjectOnDisk(root, connector, engine)
