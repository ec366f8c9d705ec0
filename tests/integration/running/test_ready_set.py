"""Ready-set dispatch: a long task doesn't hold back independent work, and waiting holds no slot."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fixtures.metadata import execute
from tests.fixtures.processes import ETL_CRAFT
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.fixtures.waiting import wait_for
from tests.integration.running.test_supervisor_sql import supervise, task_statuses

from etl_craft.core.errors import ExitCode

GATED = """
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    release = Path(context.input_params["release"])
    while not release.exists():  # the long task: runs until the test releases it
        time.sleep(0.05)
    if release.read_text() == "fail":
        raise RuntimeError("released to fail")
    return ScriptResult(row_count=1)
"""
QUICK = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    return ScriptResult(row_count=1)
"""


def tasks_sql(
    pipeline: str, tasks: list[tuple[str, str, str]], edges: list[tuple[str, str]]
) -> str:
    """tasks: (code, script, input params JSON); edges: (downstream, upstream)."""
    lines = [
        f"INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, MAX_PARALLEL_TASKS) "
        f"SELECT PROJECT_ID, '{pipeline}', 4 FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';"
    ]
    for code, script, params in tasks:
        lines.append(
            f"INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) SELECT PIPELINE_ID, "
            f"'{code}', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = '{pipeline}';"
        )
        for name, value in (("SCRIPT", script), ("INPUT_PARAMS", params)):
            lines.append(
                "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) "
                f"SELECT TASK_ID, '{name}', '{value}' FROM CFG_TASKS WHERE TASK_CODE = '{code}';"
            )
    for down, up in edges:
        lines.append(
            "INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID) SELECT d.TASK_ID, "
            f"u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u WHERE d.TASK_CODE = '{down}' "
            f"AND u.TASK_CODE = '{up}';"
        )
    return "\n".join(lines)


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    scripts = made.root / "ingestion_scripts"
    scripts.mkdir()
    (scripts / "gated.py").write_text(GATED)
    (scripts / "quick.py").write_text(QUICK)
    yield made
    made.engine.dispose()


def live_attempts(project: ProjectOnDisk) -> int:
    with project.engine.read() as conn:
        return int(
            execute(
                conn,
                "SELECT count(*) FROM AUD_TASK_ATTEMPTS WHERE STATUS IN ('CLAIMED', 'RUNNING')",
            ).scalar_one()
        )


def test_a_long_task_does_not_delay_an_independent_chain(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    gated = f'{{"release": "{release}"}}'
    project.migrate(
        "0001_pipeline.sql",
        tasks_sql(
            "w2",
            [("long", "gated.py", gated), ("b", "quick.py", "{}"), ("c", "quick.py", "{}")],
            [("c", "b")],
        ),
    )
    run_id = project.new_run("w2")
    outcome: list[str] = []
    supervisor = threading.Thread(target=lambda: outcome.append(supervise(project, run_id)))
    supervisor.start()
    try:
        wait_for(
            lambda: task_statuses(project, run_id).get("c", ("", None))[0] == "SUCCESS",
            "c to finish while the long task still runs",
        )
        assert task_statuses(project, run_id)["long"][0] == "IN-PROGRESS"
    finally:
        release.write_text("go")
        supervisor.join(timeout=120)
    assert outcome == ["SUCCESS"]


def test_tasks_waiting_on_an_upstream_hold_no_slot(project: ProjectOnDisk, tmp_path: Path) -> None:
    release = tmp_path / "release"
    downstream = [(f"d{n:03d}", "quick.py", "{}") for n in range(100)]
    project.migrate(
        "0001_pipeline.sql",
        tasks_sql(
            "fan",
            [("up", "gated.py", f'{{"release": "{release}"}}'), *downstream],
            [(code, "up") for code, _, _ in downstream],
        ),
    )
    run_id = project.new_run("fan")
    supervisor = threading.Thread(target=lambda: supervise(project, run_id))
    supervisor.start()
    try:
        wait_for(lambda: live_attempts(project) == 1, "the upstream to be running")
        statuses = task_statuses(project, run_id)
        assert statuses == {"up": ("IN-PROGRESS", None)}
        assert live_attempts(project) == 1
    finally:
        # Failing the upstream settles the hundred without starting a process each.
        release.write_text("fail")
        supervisor.join(timeout=300)
    finished = task_statuses(project, run_id)
    assert finished.pop("up")[0] == "FAILED"
    assert len(finished) == 100
    assert {status for status, _ in finished.values()} == {"SKIPPED"}


def test_run_task_code_waits_for_unmet_dependencies(project: ProjectOnDisk) -> None:
    project.migrate(
        "0001_pipeline.sql",
        tasks_sql("pair", [("a", "quick.py", "{}"), ("b", "quick.py", "{}")], [("b", "a")]),
    )

    def run_task(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ETL_CRAFT, "run", "--pipeline_code", "pair", "--task_code", code],
            cwd=project.root,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    waiting = run_task("b")
    assert waiting.returncode == ExitCode.WAITING, waiting.stderr
    assert "b can't start yet" in waiting.stderr
    with project.engine.read() as conn:
        assert execute(conn, "SELECT count(*) FROM AUD_TASK_RUN_LOG").scalar_one() == 0
    first = run_task("a")
    assert first.returncode == 0, first.stdout + first.stderr
    second = run_task("b")
    assert second.returncode == 0, second.stdout + second.stderr
    with project.engine.read() as conn:
        runs = execute(conn, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG").scalars().all()
    assert runs == ["SUCCESS"]
