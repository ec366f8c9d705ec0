"""`etl-craft logs`: an attempt's log printed whole, or followed while its task runs.

Real processes on both Engine DBs: `etl-craft run` runs a task that writes a line, then waits
for a file the test creates before it writes a second; `etl-craft logs --follow` must show the
first line while the task still waits, and the second once it is written.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.chaos.harness import scalar
from tests.fixtures.processes import Processes, scripted_project
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.fixtures.waiting import wait_for
from tests.integration.worker.queueing import start_worker

# Writes a line, says it started, waits to be released, then writes a second line.
TALKS = """
import logging
import sys
import time
from pathlib import Path
from typing import Any

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    folder = Path(context.input_params["folder"])
    context.log.info("first line of %s", context.input_params["marker"])
    print("printed by the script")
    sys.stdout.flush()
    (folder / "started").write_text("yes")
    while not (folder / "release").exists():
        time.sleep(0.05)
    logging.getLogger("etl_craft.script").warning("second line after the release")
    return ScriptResult(row_count=1)
"""


def talking_pipeline(project: ProjectOnDisk, marker: str) -> None:
    (project.root / "ingestion_scripts" / "talks.py").write_text(TALKS)
    params = json.dumps({"folder": str(project.root), "marker": marker})
    project.migrate(
        f"0001_talks_{marker}.sql",
        f"""
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
        SELECT PROJECT_ID, 'talks' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'speak', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'talks';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT TASK_ID, 'SCRIPT', 'talks.py' FROM CFG_TASKS WHERE TASK_CODE = 'speak';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT TASK_ID, 'INPUT_PARAMS', '{params}' FROM CFG_TASKS WHERE TASK_CODE = 'speak';
        """,
    )


def output(processes: Processes, process: subprocess.Popen[bytes]) -> str:
    return (processes.folder / f"etl-craft-{processes.started.index(process)}.out").read_text()


def the_attempt(project: ProjectOnDisk) -> int:
    return int(scalar(project, "SELECT MAX(ATTEMPT_ID) FROM AUD_TASK_ATTEMPTS"))


def test_follow_shows_the_lines_of_a_running_task_as_they_are_written(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    project = chaos_project
    talking_pipeline(project, "followed")
    run = processes.start(project, "run", "--pipeline_code", "talks")
    wait_for((project.root / "started").exists, "the task to start")
    attempt = the_attempt(project)
    follow = processes.start(project, "logs", "--attempt", str(attempt), "--follow")
    wait_for(lambda: "first line of followed" in output(processes, follow), "the first line")
    shown = output(processes, follow)
    assert "printed by the script" in shown
    assert "second line" not in shown  # the task is still waiting: nothing invented ahead
    assert follow.poll() is None, "--follow ended while the attempt still runs"

    (project.root / "release").write_text("go")
    wait_for(lambda: "second line after the release" in output(processes, follow), "line two")
    done = processes.finish(follow, timeout=60)
    assert done.code == 0, done.output
    assert done.output.count("first line of followed") == 1
    assert done.output.count("second line after the release") == 1
    assert f"attempt {attempt} ended SUCCESS" in done.output
    assert processes.finish(run).code == 0


def test_logs_by_run_and_task_as_json_each_line_once(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    project = chaos_project
    talking_pipeline(project, "printed")
    (project.root / "release").write_text("go")
    assert processes.run(project, "run", "--pipeline_code", "talks").code == 0
    run_id = int(scalar(project, "SELECT MAX(PIPELINE_RUN_ID) FROM AUD_PIPELINES_RUN_LOG"))
    shown = logs_json(processes, project, "--run", str(run_id), "--task", "speak")
    assert shown["schema"] == "etl-craft/attempt-log/1"
    assert shown["attempt"]["status"] == "SUCCESS"
    lines = shown["lines"]
    assert isinstance(lines, list)
    assert len([line for line in lines if "first line of printed" in line]) == 1
    assert lines.count("printed by the script") == 1
    assert len([line for line in lines if "second line after the release" in line]) == 1
    assert shown["path"] == scalar(project, "SELECT LOG_PATH FROM AUD_TASK_ATTEMPTS")


def logs_json(processes: Processes, project: ProjectOnDisk, *args: str) -> dict[str, Any]:
    done = processes.run(project, "--format", "json", "logs", *args)
    assert done.code == 0, done.output
    document = json.loads(done.output)
    assert isinstance(document, dict)
    return document


def test_two_engine_dbs_of_one_project_folder_keep_separate_logs(
    tmp_path: Path, processes: Processes, pg_fresh_url: str
) -> None:
    """The first run of a SQLite and of a PostgreSQL Engine DB have the same ids; each log
    holds its own run's lines only."""
    sqlite = scripted_project(tmp_path / "etl-craft", None)
    talking_pipeline(sqlite, "sqlite")
    (sqlite.root / "release").write_text("go")
    assert processes.run(sqlite, "run", "--pipeline_code", "talks").code == 0
    sqlite_log = Path(str(scalar(sqlite, "SELECT LOG_PATH FROM AUD_TASK_ATTEMPTS")))
    sqlite.engine.dispose()
    for applied in (sqlite.root / "migrations").glob("*.sql"):
        applied.unlink()  # the PostgreSQL Engine DB gets the same pipeline by its own migration

    pg = make_project(sqlite.root, pg_fresh_url)
    talking_pipeline(pg, "postgresql")
    assert processes.run(pg, "run", "--pipeline_code", "talks").code == 0
    pg_log = Path(str(scalar(pg, "SELECT LOG_PATH FROM AUD_TASK_ATTEMPTS")))
    attempt = the_attempt(pg)
    pg.engine.dispose()

    assert pg_log != sqlite_log
    assert "first line of sqlite" in sqlite_log.read_text()
    assert "first line of postgresql" not in sqlite_log.read_text()
    shown = logs_json(processes, pg, "--attempt", str(attempt))
    lines = shown["lines"]
    assert isinstance(lines, list)
    text = "\n".join(lines)
    assert "first line of postgresql" in text
    assert "first line of sqlite" not in text


def test_follow_shows_the_lines_of_an_attempt_a_worker_runs(
    pg_project: ProjectOnDisk, processes: Processes
) -> None:
    project = pg_project
    talking_pipeline(project, "worked")
    start_worker(processes, project, "--ingestion-slots", "1")
    processes.start(project, "server", "--pool-provider", "queue")
    project.queued_run("talks")
    wait_for((project.root / "started").exists, "the worker's task to start")
    attempt = the_attempt(project)
    assert scalar(project, "SELECT OWNER_ID FROM AUD_TASK_ATTEMPTS") is not None
    follow = processes.start(project, "logs", "--attempt", str(attempt), "--follow")
    wait_for(lambda: "first line of worked" in output(processes, follow), "the first line")
    assert "second line" not in output(processes, follow)
    (project.root / "release").write_text("go")
    done = processes.finish(follow, timeout=60)
    assert done.code == 0, done.output
    assert done.output.count("second line after the release") == 1
    assert f"attempt {attempt} ended SUCCESS" in done.output
