"""Projects and CLI callers for the run-control tests, on SQLite and PostgreSQL Engine DBs."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from etl_craft.cli.main import run as run_cli
from etl_craft.core.errors import ExitCode
from tests.fixtures.metadata import execute
from tests.fixtures.processes import ETL_CRAFT, clean_env
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.running.test_supervisor_sql import CHAIN

ACTOR = "github:alice"
BREAK_LAND = """
UPDATE CFG_TASK_PARAMETERS SET PARAMETER_VALUE = 'SELECT CAST(''x'' AS INTEGER) AS order_id'
 WHERE PARAMETER_NAME = 'SOURCE_SQL' AND TASK_ID = (SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = 'land');
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    yield made
    made.engine.dispose()


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str

    def document(self) -> dict[str, Any]:
        loaded = json.loads(self.out)
        assert isinstance(loaded, dict)
        return loaded


@dataclass
class Cli:
    """etl-craft in this process, acting as ETL_CRAFT_ACTOR."""

    project: ProjectOnDisk
    capsys: pytest.CaptureFixture[str]

    def __call__(self, *args: str) -> Done:
        self.capsys.readouterr()
        code = run_cli(["--config", str(self.project.config), *args])
        captured = self.capsys.readouterr()
        return Done(code, captured.out, captured.err)

    def json(self, *args: str) -> Done:
        return self(*args[:1], "--format", "json", *args[1:])


@pytest.fixture
def cli(
    project: ProjectOnDisk, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Cli:
    for key in [key for key in os.environ if key.startswith("ETL_CRAFT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("ETL_CRAFT_ACTOR", ACTOR)
    monkeypatch.setenv("ETL_CRAFT_POLL_SECONDS", "0.2")
    return Cli(project, capsys)


def cli_process(project: ProjectOnDisk, *args: str) -> subprocess.Popen[str]:
    """etl-craft as a real process of its own, in the project folder."""
    return subprocess.Popen(
        [ETL_CRAFT, *args],
        cwd=project.root,
        env=clean_env(ETL_CRAFT_ACTOR=ACTOR, ETL_CRAFT_POLL_SECONDS="0.2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(process: subprocess.Popen[str], timeout: float = 120) -> Done:
    out, err = process.communicate(timeout=timeout)
    return Done(process.returncode, out, err)


def rows(project: ProjectOnDisk, sql: str, **params: Any) -> list[dict[str, Any]]:
    with project.engine.read() as conn:
        return [dict(row) for row in execute(conn, sql, **params).mappings()]


def one(project: ProjectOnDisk, sql: str, **params: Any) -> Any:
    with project.engine.read() as conn:
        return execute(conn, sql, **params).scalar_one()


def interventions(project: ProjectOnDisk, run_id: int) -> list[tuple[Any, ...]]:
    """(kind, task code or None, from, to, reason, actor) of a run, in order."""
    found = rows(
        project,
        "SELECT i.KIND AS kind, k.TASK_CODE AS task, i.FROM_STATUS AS from_status, "
        "i.TO_STATUS AS to_status, i.REASON AS reason, i.REQUESTED_BY AS actor "
        "FROM AUD_RUN_INTERVENTIONS i LEFT JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = i.TASK_RUN_ID "
        "LEFT JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE i.PIPELINE_RUN_ID = :r "
        "ORDER BY i.INTERVENTION_ID",
        r=run_id,
    )
    return [tuple(row.values()) for row in found]


def actions(project: ProjectOnDisk, command: str) -> list[dict[str, Any]]:
    return rows(
        project,
        "SELECT a.ACTOR AS actor, a.ACTOR_KIND AS actor_kind, a.OUTCOME AS outcome, "
        "a.EXIT_CODE AS exit_code, p.PIPELINE_CODE AS pipeline, a.PIPELINE_RUN_ID AS run_id, "
        "k.TASK_CODE AS task, a.ARGUMENTS AS arguments FROM AUD_ACTIONS a "
        "LEFT JOIN CFG_PIPELINES p ON p.PIPELINE_ID = a.PIPELINE_ID "
        "LEFT JOIN CFG_TASKS k ON k.TASK_ID = a.TASK_ID WHERE a.COMMAND = :c ORDER BY a.ACTION_ID",
        c=command,
    )


def task_runs(project: ProjectOnDisk, run_id: int) -> dict[str, tuple[str, int]]:
    """Task code -> (status, attempt count) in a run."""
    found = rows(
        project,
        "SELECT k.TASK_CODE AS task, t.STATUS AS status, t.ATTEMPT_COUNT AS attempts "
        "FROM AUD_TASK_RUN_LOG t JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE t.PIPELINE_RUN_ID = :r",
        r=run_id,
    )
    return {row["task"]: (row["status"], int(row["attempts"])) for row in found}


def run_status(project: ProjectOnDisk, run_id: int) -> str:
    return str(
        one(
            project, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r", r=run_id
        )
    )


def mark(cli: Cli, run_id: int, task: str, status: str, *extra: str) -> str:
    """Marks a task of an orders run by hand, asserting the CLI accepted it; what it said."""
    done = cli(
        "mark",
        "--pipeline_code",
        "orders",
        "--run-id",
        str(run_id),
        "--task_code",
        task,
        "--status",
        status,
        "--reason",
        "loaded by hand",
        *extra,
    )
    assert done.code == 0, done.err
    return done.out


def failed_orders_run(project: ProjectOnDisk, cli: Cli, *more_tasks: str) -> int:
    """Runs orders (CHAIN and `more_tasks`) with land broken; the id of the run, which failed."""
    project.migrate("0001_orders.sql", CHAIN)
    for number, sql in enumerate(more_tasks, start=2):
        project.migrate(f"{number:04d}_more_tasks.sql", sql)
    project.migrate(f"{len(more_tasks) + 2:04d}_break_land.sql", BREAK_LAND)
    done = cli.json("run", "--pipeline_code", "orders")
    assert done.code == ExitCode.FAILURE, done.err
    return int(done.document()["run_id"])
