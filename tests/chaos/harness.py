"""Pipelines and scripts for the chaos suite, and reads of what its processes left in the Engine
DB (the processes themselves are started and stopped by tests.fixtures.processes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from etl_craft.core.errors import ExitCode
from tests.fixtures.metadata import execute
from tests.fixtures.processes import ETL_CRAFT, Done, Processes, task_processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

# The chaos modules take the shared process and wait helpers from here along with the rest.
__all__ = [
    "APPENDED",
    "ETL_CRAFT",
    "LIVE",
    "LOADS",
    "QUICK",
    "Done",
    "Processes",
    "attempts",
    "held_pipeline",
    "leases_expired",
    "live_attempts",
    "refused_as_ended",
    "rows",
    "run_statuses",
    "scalar",
    "task_processes",
    "wait_for",
    "warehouse_rows",
]
LIVE = "('CLAIMED', 'RUNNING')"

# Two tasks into one DuckDB table: setup creates it, append adds three rows per batch.
LOADS = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'loads' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'setup', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'loads';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'append', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'loads';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'append' AND u.TASK_CODE = 'setup';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT k.TASK_ID, x.N, x.V FROM CFG_TASKS k JOIN (
  SELECT 'setup' AS T, 'ACTION' AS N, 'SETUP_TABLE' AS V
  UNION ALL SELECT 'append', 'ACTION', 'APPEND_TABLE'
  UNION ALL SELECT 'setup', 'TARGET_OBJECT', 'lnd.events'
  UNION ALL SELECT 'append', 'TARGET_OBJECT', 'lnd.events'
  UNION ALL SELECT 'setup', 'SOURCE_SQL', 'SELECT * FROM (VALUES (0, ''x'')) v(id, label) WHERE id > 0'
  UNION ALL SELECT 'append', 'SOURCE_SQL', 'SELECT * FROM (VALUES (1, ''a''), (2, ''b''), (3, ''c'')) v(id, label)'
  UNION ALL SELECT 'append', 'RETRIES', '2'
  UNION ALL SELECT 'append', 'RETRY_DELAY_SECONDS', '0'
) x ON x.T = k.TASK_CODE;
"""
APPENDED = [(1, "a"), (2, "b"), (3, "c")]

# The first attempt says it started and runs until the test writes its release file.
HOLD = """
import os
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    started = Path(context.input_params["started"])
    release = Path(context.input_params["release"])
    if started.exists():
        return ScriptResult(row_count=1, offset=f"attempt-{context.attempt_id}")
    started.write_text(str(os.getpid()))
    while not release.exists():
        time.sleep(0.05)
    return ScriptResult(row_count=7, offset="first-attempt")
"""
QUICK = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    return ScriptResult(row_count=1)
"""


def held_pipeline(project: ProjectOnDisk, started: Path, release: Path) -> None:
    """Pipeline held: pull (HOLD, one retry, a TEXT offset), then after (QUICK)."""
    scripts = project.root / "ingestion_scripts"
    (scripts / "hold.py").write_text(HOLD)
    (scripts / "quick.py").write_text(QUICK)
    project.migrate(
        "0001_held.sql",
        f"""
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
        SELECT PROJECT_ID, 'held' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'pull', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'held';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'after', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'held';
        INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
        SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
         WHERE d.TASK_CODE = 'after' AND u.TASK_CODE = 'pull';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT k.TASK_ID, x.N, x.V FROM CFG_TASKS k JOIN (
          SELECT 'pull' AS T, 'SCRIPT' AS N, 'hold.py' AS V
          UNION ALL SELECT 'pull', 'INPUT_PARAMS',
                           '{{"started": "{started}", "release": "{release}"}}'
          UNION ALL SELECT 'pull', 'RETRIES', '1'
          UNION ALL SELECT 'pull', 'RETRY_DELAY_SECONDS', '0'
          UNION ALL SELECT 'pull', 'OFFSET_TYPE', 'TEXT'
          UNION ALL SELECT 'after', 'SCRIPT', 'quick.py'
        ) x ON x.T = k.TASK_CODE;
        """,
    )


def rows(project: ProjectOnDisk, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    with project.engine.read() as conn:
        return [tuple(row) for row in execute(conn, sql, **params).all()]


def scalar(project: ProjectOnDisk, sql: str, **params: Any) -> Any:
    with project.engine.read() as conn:
        return execute(conn, sql, **params).scalar_one()


def attempts(project: ProjectOnDisk, task_code: str) -> list[tuple[int, str, str | None]]:
    """(attempt number, status, outcome source) of a task's attempts, in order."""
    return rows(
        project,
        "SELECT a.ATTEMPT_NUMBER, a.STATUS, a.OUTCOME_SOURCE FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE k.TASK_CODE = :t ORDER BY a.ATTEMPT_ID",
        t=task_code,
    )


def live_attempts(project: ProjectOnDisk) -> int:
    return int(scalar(project, f"SELECT count(*) FROM AUD_TASK_ATTEMPTS WHERE STATUS IN {LIVE}"))


def run_statuses(project: ProjectOnDisk) -> list[str]:
    return [row[0] for row in rows(project, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG ORDER BY 1")]


def leases_expired(project: ProjectOnDisk) -> bool:
    """No live attempt and no live run still holds an unexpired lease."""
    held = scalar(
        project,
        "SELECT (SELECT count(*) FROM AUD_TASK_ATTEMPTS WHERE STATUS IN "
        f"{LIVE} AND LEASE_EXPIRES_AT >= etl_craft_now()) + (SELECT count(*) "
        "FROM AUD_PIPELINES_RUN_LOG WHERE STATUS = 'IN-PROGRESS' AND OWNER_ID IS NOT NULL "
        "AND LEASE_EXPIRES_AT >= etl_craft_now())",
    )
    return int(held) == 0


def warehouse_rows(project: ProjectOnDisk, table: str = "lnd.events") -> list[tuple[Any, ...]]:
    with duckdb.connect(str(project.root / "warehouse.duckdb"), read_only=True) as warehouse:
        found = warehouse.execute(f"SELECT id, label FROM {table} ORDER BY id").fetchall()
    return [tuple(row) for row in found]


def refused_as_ended(done: Done) -> bool:
    return done.code == ExitCode.RUN_STATE and "has ended" in done.output
