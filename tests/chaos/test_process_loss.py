"""kill -9 of a task process or of its owner: the Engine DB still tells the truth.

Real processes and real SIGKILLs, on SQLite and PostgreSQL Engine DBs.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.fixtures.metadata import execute
from tests.fixtures.processes import ETL_CRAFT
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.fixtures.waiting import wait_for
from tests.integration.running.test_supervisor_sql import supervise, task_statuses

APPEND = """
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
  UNION ALL SELECT 'setup', 'SOURCE_SQL', 'SELECT * FROM (VALUES (1, ''a''), (2, ''b''), (3, ''c'')) v(id, label)'
  UNION ALL SELECT 'append', 'SOURCE_SQL', 'SELECT * FROM (VALUES (1, ''a''), (2, ''b''), (3, ''c'')) v(id, label)'
  UNION ALL SELECT 'append', 'RETRIES', '2'
  UNION ALL SELECT 'append', 'RETRY_DELAY_SECONDS', '0'
) x ON x.T = k.TASK_CODE;
"""

STUCK = """
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    first = Path(context.input_params["first"])
    if not first.exists():
        first.write_text(str(context.attempt_id))
        while True:  # the first attempt hangs until something kills it
            time.sleep(0.1)
    return ScriptResult(row_count=1)
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    yield made
    made.engine.dispose()


def test_child_killed_after_its_commit_is_recorded_from_the_ledger(
    project: ProjectOnDisk, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.migrate("0001_loads.sql", APPEND)
    monkeypatch.setenv("ETL_CRAFT_FAULT", "child_before_report:kill")
    run_id = project.new_run("loads")
    assert supervise(project, run_id) == "SUCCESS"
    with project.engine.read() as conn:
        append = execute(
            conn,
            "SELECT a.ATTEMPT_NUMBER, a.STATUS, a.OUTCOME_SOURCE, a.ROWS_WRITTEN, a.EXIT_CODE "
            "FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
            "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE k.TASK_CODE = 'append'",
        ).all()
    assert [tuple(row) for row in append] == [(1, "SUCCESS", "LEDGER", 3, -signal.SIGKILL)]
    assert task_statuses(project, run_id)["append"] == ("SUCCESS", 3)
    with duckdb.connect(str(project.root / "warehouse.duckdb"), read_only=True) as warehouse:
        rows = warehouse.execute("SELECT id, label FROM lnd.events ORDER BY id").fetchall()
    assert rows == [(1, "a"), (2, "b"), (3, "c")]


def cli_env(project: ProjectOnDisk) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "ETL_CRAFT_FAULT"}
    env.update(
        ETL_CRAFT_LEASE_SECONDS="3", ETL_CRAFT_HEARTBEAT_SECONDS="1", ETL_CRAFT_ACTOR="chaos@tests"
    )
    return env


def test_owner_killed_mid_task_is_reconciled_and_retried(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    scripts = project.root / "ingestion_scripts"
    scripts.mkdir()
    (scripts / "stuck.py").write_text(STUCK)
    first = tmp_path / "first-attempt"
    project.migrate(
        "0001_stuck.sql",
        f"""
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
        SELECT PROJECT_ID, 'hang' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'pull', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'hang';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT TASK_ID, x.N, x.V FROM CFG_TASKS, (
          SELECT 'SCRIPT' AS N, 'stuck.py' AS V
          UNION ALL SELECT 'INPUT_PARAMS', '{{"first": "{first}"}}'
          UNION ALL SELECT 'RETRIES', '1' UNION ALL SELECT 'RETRY_DELAY_SECONDS', '0') x
         WHERE TASK_CODE = 'pull';
        """,
    )
    owner = subprocess.Popen(
        [ETL_CRAFT, "run", "--pipeline_code", "hang"],
        cwd=project.root,
        env=cli_env(project),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(first.exists, "the first attempt to start its script")
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    finally:
        owner.kill()
    child_pid = _attempt_pid(project)
    wait_for(lambda: _lease_expired(project), "the dead owner's lease to expire")
    second = subprocess.run(
        [ETL_CRAFT, "run", "--pipeline_code", "hang"],
        cwd=project.root,
        env=cli_env(project),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert second.returncode == 0, second.stdout + second.stderr
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT a.ATTEMPT_NUMBER, a.STATUS, a.OUTCOME_SOURCE, a.ERROR_MESSAGE "
            "FROM AUD_TASK_ATTEMPTS a ORDER BY a.ATTEMPT_NUMBER",
        ).all()
        run_status = execute(conn, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG").scalars().all()
    assert [(row[0], row[1], row[2]) for row in rows] == [
        (1, "LOST", "RECONCILER"),
        (2, "SUCCESS", "CHILD"),
    ]
    assert "was lost: owner" in rows[0][3]
    assert run_status == ["SUCCESS"]
    assert not Path(f"/proc/{child_pid}").exists() or _zombie_or_gone(child_pid)


def _attempt_pid(project: ProjectOnDisk) -> int:
    def running() -> bool:
        with project.engine.read() as conn:
            return bool(
                execute(
                    conn, "SELECT count(*) FROM AUD_TASK_ATTEMPTS WHERE PID IS NOT NULL"
                ).scalar_one()
                == 1
            )

    wait_for(running, "the attempt to record its process")
    with project.engine.read() as conn:
        return int(execute(conn, "SELECT PID FROM AUD_TASK_ATTEMPTS").scalar_one())


def _lease_expired(project: ProjectOnDisk) -> bool:
    with project.engine.read() as conn:
        return bool(
            execute(
                conn,
                "SELECT count(*) FROM AUD_TASK_ATTEMPTS WHERE LEASE_EXPIRES_AT < etl_craft_now()",
            ).scalar_one()
        )


def _zombie_or_gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2 :].split()[0] == "Z"
