"""The pipeline gate at admission, through the real CLI: admitted, consumed once, or skipped."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fixtures.metadata import execute
from tests.fixtures.processes import ETL_CRAFT
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.running.test_gates import FAILING
from tests.integration.running.test_ready_set import QUICK, tasks_sql

PIPELINE_DEPENDENCY = """
INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID, DEPENDENCY_TYPE)
SELECT d.PIPELINE_ID, u.PIPELINE_ID, 'SUCCESS' FROM CFG_PIPELINES d, CFG_PIPELINES u
 WHERE d.PIPELINE_CODE = 'report' AND u.PIPELINE_CODE = 'feed';
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    with made.config.open("a") as config:
        config.write("Orchestration:\n  gate_wait_minutes: 0\n")
    scripts = made.root / "ingestion_scripts"
    scripts.mkdir()
    (scripts / "quick.py").write_text(QUICK)
    (scripts / "failing.py").write_text(FAILING)
    made.migrate(
        "0001_pipelines.sql",
        tasks_sql("feed", [("pull", "quick.py", "{}")], [])
        + tasks_sql("report", [("build", "quick.py", "{}")], [])
        + PIPELINE_DEPENDENCY,
    )
    yield made
    made.engine.dispose()


def run(project: ProjectOnDisk, pipeline: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ETL_CRAFT, "run", "--pipeline_code", pipeline],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def runs(project: ProjectOnDisk, pipeline: str) -> list[tuple[str, str | None]]:
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT r.STATUS, r.MESSAGE FROM AUD_PIPELINES_RUN_LOG r JOIN CFG_PIPELINES p "
            "ON p.PIPELINE_ID = r.PIPELINE_ID WHERE p.PIPELINE_CODE = :p ORDER BY r.PIPELINE_RUN_ID",
            p=pipeline,
        ).all()
    return [(row[0], row[1]) for row in rows]


def test_a_pipeline_gate_admits_once_per_upstream_run(project: ProjectOnDisk) -> None:
    assert run(project, "feed").returncode == 0
    first = run(project, "report")
    assert first.returncode == 0, first.stdout + first.stderr
    second = run(project, "report")
    assert second.returncode == 0, second.stdout + second.stderr
    statuses = runs(project, "report")
    assert statuses[0] == ("SUCCESS", None)
    assert statuses[1][0] == "SKIPPED"
    assert "gave up after waiting 0 minutes for feed" in (statuses[1][1] or "")
    assert "already consumed" in (statuses[1][1] or "")
    with project.engine.read() as conn:
        decisions = execute(
            conn,
            "SELECT RESULT, TASK_ID FROM AUD_GATE_DECISIONS ORDER BY DECISION_ID",
        ).all()
        consumed = execute(conn, "SELECT count(*) FROM AUD_DEPENDENCY_CONSUMPTION").scalar_one()
    assert [tuple(row) for row in decisions] == [("SATISFIED", None), ("UNSATISFIED", None)]
    assert consumed == 1


def test_a_failed_upstream_run_skips_the_downstream_run(project: ProjectOnDisk) -> None:
    project.migrate(
        "0002_break.sql",
        "UPDATE CFG_TASK_PARAMETERS SET PARAMETER_VALUE = 'failing.py' "
        "WHERE PARAMETER_NAME = 'SCRIPT' AND TASK_ID = "
        "(SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = 'pull');",
    )
    assert run(project, "feed").returncode == 1
    skipped = run(project, "report")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    ((status, message),) = runs(project, "report")
    assert status == "SKIPPED"
    assert message is not None
    assert "feed FAILED in run" in message
    with project.engine.read() as conn:
        assert (
            execute(
                conn,
                "SELECT count(*) FROM AUD_TASK_RUN_LOG t JOIN CFG_TASKS k ON "
                "k.TASK_ID = t.TASK_ID WHERE k.TASK_CODE = 'build'",
            ).scalar_one()
            == 0
        )
