"""Queue attempts as the overseer will: a run, its task runs and one QUEUED attempt each."""

from __future__ import annotations

import json
import signal
from collections.abc import Mapping
from typing import Any

from etl_craft.core.enums import SlotKind
from etl_craft.enginedb.transitions import create_task_run, queue_attempt
from tests.chaos.harness import QUICK, rows
from tests.fixtures.metadata import TESTER
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

# Says it started (attempt id and pid, appended to starts.log), then waits to be released.
WAIT = """
import os
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    folder = Path(context.input_params["folder"])
    with (folder / "starts.log").open("a") as starts:
        starts.write(f"{context.attempt_id} {os.getpid()}\\n")
    name = context.input_params["name"]
    while not (folder / f"release-{name}").exists() and not (folder / "release-all").exists():
        time.sleep(0.05)
    return ScriptResult(row_count=1)
"""


def python_pipeline(
    project: ProjectOnDisk,
    code: str,
    tasks: list[str],
    timeout_seconds: int | None = None,
    script_of: Mapping[str, str] | None = None,
) -> None:
    """Pipeline ``code`` of PYTHON tasks; a task named quick* runs QUICK, the others WAIT, unless
    ``script_of`` names its script (a file the caller wrote into ingestion_scripts)."""
    scripts = project.root / "ingestion_scripts"
    (scripts / "wait.py").write_text(WAIT)
    (scripts / "quick.py").write_text(QUICK)
    statements = [
        f"INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE) SELECT PROJECT_ID, '{code}' "
        "FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';"
    ]
    for task in tasks:
        script = (script_of or {}).get(task, "quick.py" if task.startswith("quick") else "wait.py")
        params = {"SCRIPT": script, "INPUT_PARAMS": json.dumps(wait_params(project, task))}
        if timeout_seconds is not None:
            params["TASK_TIMEOUT_SECONDS"] = str(timeout_seconds)
        statements.append(
            f"INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) SELECT PIPELINE_ID, "
            f"'{task}', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = '{code}';"
        )
        statements += [
            "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) "
            f"SELECT TASK_ID, '{name}', '{value}' FROM CFG_TASKS WHERE TASK_CODE = '{task}';"
            for name, value in params.items()
        ]
    migrate(project, code, "\n".join(statements))


def migrate(project: ProjectOnDisk, name: str, sql: str) -> None:
    """Apply ``sql`` as the project's next numbered migration."""
    folder = project.root / "migrations"
    number = len(list(folder.glob("*.sql"))) + 1 if folder.is_dir() else 1
    project.migrate(f"{number:04d}_{name}.sql", sql)


def wait_params(project: ProjectOnDisk, task: str) -> dict[str, Any]:
    return {"folder": str(project.root), "name": task}


def release(project: ProjectOnDisk, task: str = "all") -> None:
    (project.root / f"release-{task}").write_text("go")


def starts(project: ProjectOnDisk) -> list[tuple[int, int]]:
    """(attempt id, pid) of every WAIT script that started, in order."""
    log = project.root / "starts.log"
    lines = log.read_text().split() if log.exists() else []
    return [(int(a), int(p)) for a, p in zip(lines[::2], lines[1::2], strict=True)]


def queue_run(
    project: ProjectOnDisk, pipeline: str, tasks: list[str], pool: str = "default"
) -> dict[str, int]:
    """Queue an attempt of each task in a new run of ``pipeline``; task code -> attempt id."""
    run_id = project.new_run(pipeline, run_key=f"manual:{pipeline}")
    handlers = dict(
        rows(
            project,
            "SELECT k.TASK_CODE, k.HANDLER FROM CFG_TASKS k JOIN CFG_PIPELINES p "
            "ON p.PIPELINE_ID = k.PIPELINE_ID WHERE p.PIPELINE_CODE = :p",
            p=pipeline,
        )
    )
    task_ids = dict(
        rows(
            project,
            "SELECT k.TASK_CODE, k.TASK_ID FROM CFG_TASKS k JOIN CFG_PIPELINES p "
            "ON p.PIPELINE_ID = k.PIPELINE_ID WHERE p.PIPELINE_CODE = :p",
            p=pipeline,
        )
    )
    queued = {}
    with project.engine.transaction(TESTER) as conn:
        for task in tasks:
            kind = SlotKind.INGESTION if handlers[task] == "PYTHON" else SlotKind.WAREHOUSE
            task_run_id = create_task_run(conn, run_id, task_ids[task], TESTER)
            attempt = queue_attempt(conn, task_run_id, TESTER, slot_kind=kind, pool=pool)
            queued[task] = attempt.attempt_id
    return queued


def start_worker(
    processes: Processes,
    project: ProjectOnDisk,
    *options: str,
    settings: dict[str, str] | None = None,
    fault: str | None = None,
) -> tuple[Any, str]:
    """A worker process and its id, once it has registered."""
    process = processes.start(project, "worker", *options, fault=fault, settings=settings)

    def registered() -> str | None:
        assert process.poll() is None, f"the worker exited with code {process.returncode}"
        found = rows(project, "SELECT WORKER_ID FROM AUD_WORKERS WHERE PID = :p", p=process.pid)
        return str(found[0][0]) if found else None

    return process, wait_for(registered, "the worker to register", 120)


def stop_worker(processes: Processes, process: Any) -> int:
    process.send_signal(signal.SIGTERM)
    return processes.finish(process).code


def status_of(project: ProjectOnDisk, attempt_id: int) -> str:
    [(status,)] = rows(
        project, "SELECT STATUS FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a", a=attempt_id
    )
    return str(status)


def statuses(project: ProjectOnDisk, pipeline: str | None = None) -> dict[str, int]:
    """How many attempts (of ``pipeline``'s runs, or of every run) are in each status."""
    if pipeline is None:
        found = rows(project, "SELECT STATUS, count(*) FROM AUD_TASK_ATTEMPTS GROUP BY STATUS")
    else:
        found = rows(
            project,
            "SELECT a.STATUS, count(*) FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
            "ON t.TASK_RUN_ID = a.TASK_RUN_ID JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
            "JOIN CFG_PIPELINES p ON p.PIPELINE_ID = k.PIPELINE_ID WHERE p.PIPELINE_CODE = :p "
            "GROUP BY a.STATUS",
            p=pipeline,
        )
    return {str(status): int(count) for status, count in found}
