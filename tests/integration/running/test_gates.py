"""Cross-pipeline gates: judged without holding a slot, recorded, consumed once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.fixtures.waiting import wait_for
from tests.integration.running.test_ready_set import QUICK, tasks_sql
from tests.integration.running.test_supervisor_sql import task_statuses

FAILING = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    raise RuntimeError("upstream broke")
"""
CROSS = """
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE)
SELECT d.TASK_ID, u.TASK_ID, 'SUCCESS' FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'load' AND u.TASK_CODE = 'extract';
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    scripts = made.root / "ingestion_scripts"
    scripts.mkdir()
    (scripts / "quick.py").write_text(QUICK)
    (scripts / "failing.py").write_text(FAILING)
    made.migrate(
        "0001_pipelines.sql",
        tasks_sql("up", [("extract", "quick.py", "{}")], [])
        + tasks_sql("down", [("load", "quick.py", "{}")], [])
        + CROSS,
    )
    yield made
    made.engine.dispose()


def supervise(project: ProjectOnDisk, run_id: int, wait_minutes: float = 60.0) -> str:
    supervisor = project.supervisor(gate_wait_minutes=wait_minutes)
    return supervisor.supervise(run_id).status.value


def decisions(project: ProjectOnDisk, run_id: int) -> list[tuple[str, str]]:
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT RESULT, REASON FROM AUD_GATE_DECISIONS WHERE PIPELINE_RUN_ID = :r "
            "ORDER BY DECISION_ID",
            r=run_id,
        ).all()
    return [(row[0], row[1]) for row in rows]


def test_a_satisfied_gate_admits_the_task_and_is_consumed_once(project: ProjectOnDisk) -> None:
    upstream = project.new_run("up", "manual:up-1")
    assert supervise(project, upstream) == "SUCCESS"
    first = project.new_run("down", "manual:down-1")
    assert supervise(project, first) == "SUCCESS"
    assert decisions(project, first) == [
        ("SATISFIED", f"up.extract SUCCESS in run {upstream} (SUCCESS)")
    ]
    with project.engine.read() as conn:
        consumed = execute(
            conn,
            "SELECT PIPELINE_RUN_ID, CONSUMED_PIPELINE_RUN_ID, CONSUMED_REVISION "
            "FROM AUD_DEPENDENCY_CONSUMPTION",
        ).all()
    assert [tuple(row) for row in consumed] == [(first, upstream, 1)]
    # The same upstream run does not satisfy the next downstream run: it waits, then gives up.
    second = project.new_run("down", "manual:down-2")
    assert supervise(project, second, wait_minutes=0.02) == "SUCCESS"
    assert task_statuses(project, second)["load"][0] == "SKIPPED"
    ((result, reason),) = decisions(project, second)
    assert result == "UNSATISFIED"
    assert reason.startswith("gave up after waiting 0.02 minutes for up.extract")


def test_a_failed_upstream_skips_the_gated_task(project: ProjectOnDisk) -> None:
    project.migrate(
        "0002_break.sql",
        "UPDATE CFG_TASK_PARAMETERS SET PARAMETER_VALUE = 'failing.py' "
        "WHERE PARAMETER_NAME = 'SCRIPT' AND TASK_ID = "
        "(SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = 'extract');",
    )
    upstream = project.new_run("up", "manual:up-1")
    assert supervise(project, upstream) == "FAILED"
    run_id = project.new_run("down", "manual:down-1")
    assert supervise(project, run_id) == "SUCCESS"
    statuses = task_statuses(project, run_id)
    assert statuses["load"][0] == "SKIPPED"
    assert decisions(project, run_id) == [
        (
            "UNSATISFIED",
            f"up.extract FAILED in run {upstream}, which does not meet a SUCCESS dependency",
        )
    ]


def test_a_waiting_gate_holds_no_slot_and_admits_when_the_upstream_runs(
    project: ProjectOnDisk,
) -> None:
    run_id = project.new_run("down", "manual:down-1")
    outcome: list[str] = []
    downstream = threading.Thread(target=lambda: outcome.append(supervise(project, run_id)))
    downstream.start()
    try:

        def waiting() -> bool:
            with project.engine.read() as conn:
                return bool(
                    execute(
                        conn, "SELECT count(*) FROM AUD_GATE_WAITS WHERE RESOLVED_AT IS NULL"
                    ).scalar_one()
                )

        wait_for(waiting, "the downstream gate to start waiting")
        with project.engine.read() as conn:
            started = execute(conn, "SELECT count(*) FROM AUD_TASK_ATTEMPTS").scalar_one()
        assert started == 0
        upstream = project.new_run("up", "manual:up-1")
        assert supervise(project, upstream) == "SUCCESS"
    finally:
        downstream.join(timeout=120)
    assert outcome == ["SUCCESS"]
    assert task_statuses(project, run_id)["load"] == ("SUCCESS", 1)
    assert decisions(project, run_id)[0][0] == "SATISFIED"
    with project.engine.read() as conn:
        open_waits = execute(
            conn, "SELECT count(*) FROM AUD_GATE_WAITS WHERE RESOLVED_AT IS NULL"
        ).scalar_one()
    assert open_waits == 0
