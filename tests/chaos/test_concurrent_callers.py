"""Two callers running one pipeline at once: one run, one supervisor, one attempt per task."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.metadata import execute
from tests.fixtures.processes import ETL_CRAFT
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.fixtures.waiting import wait_for
from tests.integration.running.test_ready_set import GATED, tasks_sql


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    (made.root / "ingestion_scripts").mkdir()
    (made.root / "ingestion_scripts" / "gated.py").write_text(GATED)
    release = tmp_path / "release"
    made.migrate(
        "0001_pipeline.sql",
        tasks_sql("once", [("slow", "gated.py", f'{{"release": "{release}"}}')], []),
    )
    yield made
    made.engine.dispose()


def test_a_second_caller_finds_the_run_supervised_and_changes_nothing(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [ETL_CRAFT, "run", "--pipeline_code", "once"],
            cwd=project.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    first, second = start(), start()
    try:

        def one_running() -> bool:
            with project.engine.read() as conn:
                return bool(
                    execute(
                        conn, "SELECT count(*) FROM AUD_TASK_ATTEMPTS WHERE STATUS = 'RUNNING'"
                    ).scalar_one()
                )

        wait_for(one_running, "the task to run")
        wait_for(
            lambda: first.poll() is not None or second.poll() is not None,
            "one of the callers to give up",
        )
        refused = first if first.poll() is not None else second
        _, refusal = refused.communicate()
        assert refused.returncode == 9, refusal
        assert "is supervised by" in refusal
    finally:
        (tmp_path / "release").write_text("go")
        outputs = [process.communicate(timeout=120) for process in (first, second)]
    assert sorted(process.returncode for process in (first, second)) == [0, 9], outputs
    with project.engine.read() as conn:
        runs = execute(conn, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG").scalars().all()
        attempts = execute(conn, "SELECT STATUS FROM AUD_TASK_ATTEMPTS").scalars().all()
    assert runs == ["SUCCESS"]
    assert attempts == ["SUCCESS"]
