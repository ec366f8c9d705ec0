"""Orchestration dependency_gates through the real CLI: a run whose upstream pipeline never ran
is skipped under enforce, runs under warn (logged) and off, and each decision names the setting."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.running.test_pipeline_gate import run, runs
from tests.integration.running.test_ready_set import QUICK, tasks_sql

DEPENDENCY = """
INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID, DEPENDENCY_TYPE)
SELECT d.PIPELINE_ID, u.PIPELINE_ID, '{kind}' FROM CFG_PIPELINES d, CFG_PIPELINES u
 WHERE d.PIPELINE_CODE = 'report' AND u.PIPELINE_CODE = 'feed';
"""


def gated_project(root: Path, url: str | None, policy: str, kind: str = "SUCCESS") -> ProjectOnDisk:
    made = make_project(root, url)
    with made.config.open("a") as config:
        # enforce would wait an hour for a feed run by default; 0 decides at the first look.
        config.write(f"Orchestration:\n  gate_wait_minutes: 0\n  dependency_gates: {policy}\n")
    scripts = made.root / "ingestion_scripts"
    scripts.mkdir()
    (scripts / "quick.py").write_text(QUICK)
    made.migrate(
        "0001_pipelines.sql",
        tasks_sql("feed", [("pull", "quick.py", "{}")], [])
        + tasks_sql("report", [("build", "quick.py", "{}")], [])
        + DEPENDENCY.format(kind=kind),
    )
    return made


@pytest.fixture(params=["sqlite", "postgresql"])
def engine_url(request: pytest.FixtureRequest) -> str | None:
    return None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))


@pytest.fixture
def project_of() -> Iterator[list[ProjectOnDisk]]:
    made: list[ProjectOnDisk] = []
    yield made
    for project in made:
        project.engine.dispose()


def decisions(project: ProjectOnDisk) -> list[tuple[str, str]]:
    with project.engine.read() as conn:
        rows = execute(conn, "SELECT RESULT, REASON FROM AUD_GATE_DECISIONS ORDER BY DECISION_ID")
        return [(row[0], row[1]) for row in rows.all()]


def build_runs(project: ProjectOnDisk) -> int:
    with project.engine.read() as conn:
        return int(
            execute(
                conn,
                "SELECT count(*) FROM AUD_TASK_RUN_LOG t JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
                "WHERE k.TASK_CODE = 'build' AND t.STATUS = 'SUCCESS'",
            ).scalar_one()
        )


@pytest.mark.parametrize(
    ("policy", "status", "result", "said"),
    [
        ("enforce", "SKIPPED", "UNSATISFIED", "gave up after waiting 0 minutes for feed"),
        ("warn", "SUCCESS", "BYPASSED", "dependency_gates is warn"),
        ("off", "SUCCESS", "BYPASSED", "dependency_gates is off"),
    ],
)
def test_a_run_whose_upstream_never_ran_follows_the_profiles_dependency_gates(
    engine_url: str | None,
    tmp_path: Path,
    project_of: list[ProjectOnDisk],
    policy: str,
    status: str,
    result: str,
    said: str,
) -> None:
    project = gated_project(tmp_path / "etl-craft", engine_url, policy)
    project_of.append(project)

    done = run(project, "report")

    assert done.returncode == 0, done.stdout + done.stderr
    assert [s for s, _ in runs(project, "report")] == [status]
    ((found, reason),) = decisions(project)
    assert (found, said in reason) == (result, True), reason
    assert build_runs(project) == (0 if policy == "enforce" else 1)
    if policy == "warn":
        # The warning says what a gated run would have done, where an operator reads it.
        assert "is not met" in done.stderr, done.stderr
        assert "counted as met" in done.stderr


def test_gates_off_still_refuse_a_failure_dependency_they_did_not_look_at(
    engine_url: str | None, tmp_path: Path, project_of: list[ProjectOnDisk]
) -> None:
    project = gated_project(tmp_path / "etl-craft", engine_url, "off", kind="FAILURE")
    project_of.append(project)

    done = run(project, "report")

    assert done.returncode == 0, done.stdout + done.stderr
    ((status, message),) = runs(project, "report")
    assert status == "SKIPPED"
    assert "a FAILURE dependency is met only by a failure" in (message or "")
    assert [r for r, _ in decisions(project)] == ["UNSATISFIED"]
    assert build_runs(project) == 0
