"""An attempt's STARTED_AT is when its task process started: after its claim, and never before
the process existed, as the process itself tells its start (the kernel's record of it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project

from etl_craft.core.time import as_utc
from etl_craft.runtime import starter

# The task writes into its attempt log when its process started, on the wall clock: the
# kernel's start time (clock ticks since boot, rounded down) moved onto the wall clock.
STARTS = """
import os, time

from etl_craft.runtime.identity import process_start
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    ticks = int(process_start(os.getpid()) or 0)
    boot = time.time() - time.clock_gettime(time.CLOCK_BOOTTIME)
    print(f"process started at {boot + ticks / os.sysconf('SC_CLK_TCK'):.6f}")
    return ScriptResult(row_count=0)
"""
PIPELINE = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'starts' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'note', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'starts';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SCRIPT', 'starts.py' FROM CFG_TASKS WHERE TASK_CODE = 'note';
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    (made.root / "ingestion_scripts").mkdir()
    (made.root / "ingestion_scripts" / "starts.py").write_text(STARTS)
    made.migrate("0001_starts.sql", PIPELINE)
    yield made
    made.engine.dispose()


@pytest.fixture(params=["fork", "spawn"])
def task_start(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("ETL_CRAFT_TASK_START", str(request.param))
    starter._task_start.cache_clear()  # read once per owner process: this test is several
    yield str(request.param)
    starter._task_start.cache_clear()


def test_started_at_follows_the_claim_and_the_process_start(
    project: ProjectOnDisk, task_start: str
) -> None:
    run_id = project.new_run("starts")
    assert project.supervisor().supervise(run_id).status.value == "SUCCESS"

    with project.engine.read() as conn:
        claimed, started, ended, log_path = execute(
            conn, "SELECT CLAIMED_AT, STARTED_AT, ENDED_AT, LOG_PATH FROM AUD_TASK_ATTEMPTS"
        ).one()
    claimed, started, ended = as_utc(claimed), as_utc(started), as_utc(ended)
    assert claimed is not None
    assert started is not None
    assert ended is not None
    noted = re.search(r"process started at ([0-9.]+)", Path(log_path).read_text())
    assert noted is not None, f"the task noted no start in {log_path}"
    process_started = datetime.fromtimestamp(float(noted.group(1)), UTC)

    assert claimed < started <= ended
    assert started >= process_started
