"""The reading commands load only what reading needs: no pydantic (the settings read the
environment only when a variable is set), no SQL parser, no warehouse driver, no web stack, and
on an SQLite Engine DB not even SQLAlchemy (they read through the standard library's sqlite3).
Each runs in a fresh interpreter, as `etl-craft` does, on a project with a finished run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.fixtures.metadata import execute
from tests.fixtures.processes import ETL_CRAFT, clean_env
from tests.fixtures.projects import ProjectOnDisk, make_project

QUICK = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    print("quick ran")
    return ScriptResult(row_count=1)
"""
PIPELINE = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'reads' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'quick', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'reads';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SCRIPT', 'quick.py' FROM CFG_TASKS WHERE TASK_CODE = 'quick';
"""
NOT_FOR_READING = (
    "sqlalchemy",  # the project's Engine DB is an SQLite file
    "pydantic",
    "pydantic_settings",
    "sqlglot",
    "duckdb",
    "psycopg",
    "fastapi",
    "jinja2",
    "prometheus_client",
    "opentelemetry",
    "dotenv",  # the project has no .env to parse
)
# What only the commands that start task processes use.
MODULES_NOT_FOR_READING = ("etl_craft.runtime.starter",)
# The module list goes to stderr's last line; the command writes to stdout.
PROBE = """
import json, sys
from etl_craft.cli.main import run
code = run({argv!r})
sys.stderr.write("\\n" + json.dumps([code, sorted(sys.modules)]) + "\\n")
"""


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ProjectOnDisk, int, int]]:
    """A project, its run of 'reads' that succeeded, and that run's attempt."""
    project = make_project(tmp_path_factory.mktemp("reading") / "etl-craft")
    (project.root / "ingestion_scripts").mkdir()
    (project.root / "ingestion_scripts" / "quick.py").write_text(QUICK)
    project.migrate("0001_reads.sql", PIPELINE)
    run_id = project.new_run("reads")
    assert project.supervisor().supervise(run_id).status.value == "SUCCESS"
    with project.engine.read() as conn:
        attempt_id = int(execute(conn, "SELECT ATTEMPT_ID FROM AUD_TASK_ATTEMPTS").scalar_one())
    yield project, run_id, attempt_id
    project.engine.dispose()


def loaded_by(project: ProjectOnDisk, argv: list[str]) -> tuple[int, set[str]]:
    """The exit code of ``etl-craft argv``, and the modules it imported with their top-level
    packages."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv)],
        cwd=project.root,
        env=clean_env(),  # no ETL_CRAFT_* setting, as on a user's machine
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    code, modules = json.loads(done.stderr.splitlines()[-1])
    return int(code), {*modules, *(name.split(".")[0] for name in modules)}


@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["status", "--pipeline", "reads"],
        ["history", "--pipeline", "reads"],
        ["explain", "--pipeline", "reads", "--task", "quick", "--run", "{run}"],
        ["logs", "--follow", "--attempt", "{attempt}"],
    ],
)
def test_a_reading_command_imports_nothing_it_does_not_read_with(
    finished: tuple[ProjectOnDisk, int, int], command: list[str]
) -> None:
    project, run_id, attempt_id = finished
    argv = [word.format(run=run_id, attempt=attempt_id) for word in command]

    code, loaded = loaded_by(project, argv)

    assert code == 0
    assert "sqlite3" in loaded  # the probe sees what the command imported
    assert sorted(loaded & {*NOT_FOR_READING, *MODULES_NOT_FOR_READING}) == []


def test_a_setting_in_the_environment_is_still_read_and_checked(
    finished: tuple[ProjectOnDisk, int, int],
) -> None:
    project, _, _ = finished
    done = subprocess.run(
        [ETL_CRAFT, "status", "--pipeline", "reads"],
        check=False,
        cwd=project.root,
        env=clean_env(ETL_CRAFT_POLL_SECONDS="soon"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "ETL_CRAFT_POLL_SECONDS='soon'" in done.stderr
