"""Python ingestion tasks under the supervisor: retries with backoff, offsets stored with SUCCESS."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.running.test_supervisor_sql import supervise, task_statuses

FLAKY = """
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    marker = Path(context.input_params["marker"])
    failures = int(marker.read_text()) if marker.exists() else 0
    if failures < context.input_params["fail_times"]:
        marker.write_text(str(failures + 1))
        raise RuntimeError(f"source not ready (failure {failures + 1})")
    print(f"loading after {failures} failures")
    return ScriptResult(row_count=5, offset=(context.offset or 0) + 5)
"""


def pipeline(marker: Path, fail_times: int, retries: int) -> str:
    params = json.dumps({"marker": str(marker), "fail_times": fail_times})
    return f"""
    INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
    SELECT PROJECT_ID, 'ingest' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
    INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
    SELECT PIPELINE_ID, 'pull', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'ingest';
    INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
    SELECT TASK_ID, x.N, x.V FROM CFG_TASKS,
      (SELECT 'SCRIPT' AS N, 'flaky.py' AS V UNION ALL SELECT 'INPUT_PARAMS', '{params}'
       UNION ALL SELECT 'OFFSET_TYPE', 'INT' UNION ALL SELECT 'RETRIES', '{retries}'
       UNION ALL SELECT 'RETRY_DELAY_SECONDS', '0') x
     WHERE TASK_CODE = 'pull';
    """


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    (made.root / "ingestion_scripts").mkdir()
    (made.root / "ingestion_scripts" / "flaky.py").write_text(FLAKY)
    yield made
    made.engine.dispose()


def attempts(project: ProjectOnDisk, run_id: int) -> list[tuple[int, str, str | None]]:
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT a.ATTEMPT_NUMBER, a.STATUS, a.ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS a "
            "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
            "WHERE t.PIPELINE_RUN_ID = :r ORDER BY a.ATTEMPT_NUMBER",
            r=run_id,
        ).all()
    return [(row[0], row[1], row[2]) for row in rows]


def stored_offset(project: ProjectOnDisk) -> str | None:
    with project.engine.read() as conn:
        value = execute(conn, "SELECT OFFSET_VALUE FROM AUD_TASK_OFFSETS").scalar()
    return None if value is None else str(value)


def test_a_task_failing_twice_succeeds_on_its_third_attempt(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    project.migrate("0001_ingest.sql", pipeline(tmp_path / "marker", fail_times=2, retries=2))
    run_id = project.new_run("ingest")
    assert supervise(project, run_id) == "SUCCESS"
    found = attempts(project, run_id)
    assert [(number, status) for number, status, _ in found] == [
        (1, "FAILED"),
        (2, "FAILED"),
        (3, "SUCCESS"),
    ]
    assert "source not ready (failure 1)" in (found[0][2] or "")
    assert task_statuses(project, run_id) == {"pull": ("SUCCESS", 5)}
    assert stored_offset(project) == "5"


def test_retries_run_out_and_the_offset_stays(project: ProjectOnDisk, tmp_path: Path) -> None:
    project.migrate("0001_ingest.sql", pipeline(tmp_path / "marker", fail_times=5, retries=1))
    run_id = project.new_run("ingest")
    assert supervise(project, run_id) == "FAILED"
    assert [status for _, status, _ in attempts(project, run_id)] == ["FAILED", "FAILED"]
    assert stored_offset(project) is None
