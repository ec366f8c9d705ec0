"""SIGTERM, SIGINT and SIGHUP to a foreground `etl-craft run` mid-task.

Real processes and real signals: the run stops its task process and its fork server, records
the attempt FAILED, releases its lease and exits 128 + the signal; `etl-craft run` again runs
the task once more and finishes the run. What is left is read from the process table.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.chaos.harness import APPENDED, attempts, rows, warehouse_rows
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.running.test_pipeline_gate import PIPELINE_DEPENDENCY
from tests.integration.running.test_ready_set import QUICK, tasks_sql

RUN = ("run", "--pipeline_code", "stoppable", "--run-key", "manual:signals")

# The first attempt says it started, then runs until something stops it.
ENDLESS = """
import os
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    started = Path(context.input_params["started"])
    if started.exists():
        return ScriptResult(row_count=1)
    started.write_text(str(os.getpid()))
    while True:
        time.sleep(0.05)
"""


def stoppable_pipeline(project: ProjectOnDisk, started: Path) -> None:
    """setup (lnd.events), then pull (ENDLESS on its first attempt, no retries), then append:
    three rows to lnd.events."""
    (project.root / "ingestion_scripts" / "endless.py").write_text(ENDLESS)
    with project.config.open("a") as config:
        config.write("Orchestration:\n  shutdown_grace_seconds: 1\n")
    project.migrate(
        "0001_stoppable.sql",
        f"""
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
        SELECT PROJECT_ID, 'stoppable' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'setup', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'stoppable';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'pull', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'stoppable';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'append', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'stoppable';
        INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
        SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
         WHERE (d.TASK_CODE, u.TASK_CODE) IN (VALUES ('append', 'pull'), ('pull', 'setup'));
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT k.TASK_ID, x.N, x.V FROM CFG_TASKS k JOIN (
          SELECT 'pull' AS T, 'SCRIPT' AS N, 'endless.py' AS V
          UNION ALL SELECT 'pull', 'INPUT_PARAMS', '{{"started": "{started}"}}'
          UNION ALL SELECT 'setup', 'ACTION', 'SETUP_TABLE'
          UNION ALL SELECT 'setup', 'TARGET_OBJECT', 'lnd.events'
          UNION ALL SELECT 'setup', 'SOURCE_SQL',
            'SELECT * FROM (VALUES (0, ''x'')) v(id, label) WHERE id > 0'
          UNION ALL SELECT 'append', 'ACTION', 'APPEND_TABLE'
          UNION ALL SELECT 'append', 'TARGET_OBJECT', 'lnd.events'
          UNION ALL SELECT 'append', 'SOURCE_SQL',
            'SELECT * FROM (VALUES (1, ''a''), (2, ''b''), (3, ''c'')) v(id, label)'
        ) x ON x.T = k.TASK_CODE;
        """,
    )


def project_processes(project: ProjectOnDisk) -> dict[int, str]:
    """Every live etl-craft process working for this project, from /proc: its task processes
    (their --config names the project) and its fork servers (they run in the project folder)."""
    found = {}
    root = str(project.root)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            folder = str((entry / "cwd").readlink())
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z" or ("etl_craft" not in command and "etl-craft" not in command):
            continue
        if root in command or folder == root:
            found[int(entry.name)] = command
    return found


def stopped_mid_task(
    project: ProjectOnDisk, processes: Processes, started: Path, signum: signal.Signals
) -> tuple[int, str]:
    """Start the run, signal it once pull runs; its exit code and output."""
    stoppable_pipeline(project, started)
    first = processes.start(project, *RUN)
    wait_for(started.exists, "the first attempt of pull to start", timeout=180)
    assert project_processes(project), "the run's fork server and task process are live"
    first.send_signal(signum)
    done = processes.finish(first)
    return done.code, done.output


def run_row(project: ProjectOnDisk) -> tuple[str, str | None]:
    ((status, owner),) = rows(project, "SELECT STATUS, OWNER_ID FROM AUD_PIPELINES_RUN_LOG")
    return status, owner


def pull_errors(project: ProjectOnDisk) -> list[tuple[str | None, str | None]]:
    """(error message, retryable) of pull's attempts, in order."""
    return [
        (row[0], row[1])
        for row in rows(
            project,
            "SELECT a.ERROR_MESSAGE, a.RETRYABLE FROM AUD_TASK_ATTEMPTS a "
            "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
            "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE k.TASK_CODE = 'pull' "
            "ORDER BY a.ATTEMPT_ID",
        )
    ]


def test_sigterm_mid_task_stops_everything_and_run_again_finishes(
    chaos_project: ProjectOnDisk, processes: Processes, tmp_path: Path
) -> None:
    project = chaos_project
    code, output = stopped_mid_task(project, processes, tmp_path / "started", signal.SIGTERM)

    assert code == 143, output
    assert "stopped by signal SIGTERM" in output
    # Nothing of the run outlives it: no task process, no fork server.
    assert project_processes(project) == {}
    assert run_row(project) == ("IN-PROGRESS", None)  # unfinished, and its lease released
    assert attempts(project, "pull") == [(1, "FAILED", "OWNER"), (2, "QUEUED", None)]
    ((stopped, retryable), _) = pull_errors(project)
    assert stopped is not None
    assert stopped.startswith("stopped by signal SIGTERM")
    assert retryable == "Y"

    again = processes.run(project, *RUN)

    assert again.code == 0, again.output
    assert run_row(project) == ("SUCCESS", None)
    assert attempts(project, "pull") == [(1, "FAILED", "OWNER"), (2, "SUCCESS", "CHILD")]
    assert attempts(project, "append") == [(1, "SUCCESS", "CHILD")]
    assert warehouse_rows(project) == APPENDED
    assert project_processes(project) == {}


@pytest.mark.parametrize(("signum", "expected"), [(signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_sigint_and_sighup_exit_with_their_codes(
    sqlite_project: ProjectOnDisk,
    processes: Processes,
    tmp_path: Path,
    signum: signal.Signals,
    expected: int,
) -> None:
    code, output = stopped_mid_task(sqlite_project, processes, tmp_path / "started", signum)

    assert code == expected, output
    assert f"stopped by signal {signum.name}" in output
    assert project_processes(sqlite_project) == {}
    assert run_row(sqlite_project) == ("IN-PROGRESS", None)
    ((stopped, _), _) = pull_errors(sqlite_project)
    assert stopped is not None
    assert stopped.startswith(f"stopped by signal {signum.name}")


def test_sigterm_while_the_gate_waits_releases_the_queued_run(
    sqlite_project: ProjectOnDisk, processes: Processes
) -> None:
    (sqlite_project.root / "ingestion_scripts" / "quick.py").write_text(QUICK)
    sqlite_project.migrate(
        "0001_gated.sql",
        tasks_sql("feed", [("pull", "quick.py", "{}")], [])
        + tasks_sql("report", [("build", "quick.py", "{}")], [])
        + PIPELINE_DEPENDENCY,
    )
    waiting = processes.start(sqlite_project, "run", "--pipeline_code", "report")

    def gate_waits() -> bool:
        found = rows(sqlite_project, "SELECT STATUS, OWNER_ID FROM AUD_PIPELINES_RUN_LOG")
        return len(found) == 1 and found[0][0] == "QUEUED" and found[0][1] is not None

    wait_for(gate_waits, "the report run to wait on its gate", timeout=180)
    waiting.send_signal(signal.SIGTERM)
    done = processes.finish(waiting)

    assert done.code == 143, done.output
    assert run_row(sqlite_project) == ("QUEUED", None)
