"""etl-craft pause, resume and audit; a pause mid-run leaves the run for a later run."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.core.errors import ExitCode
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.control.conftest import (
    ACTOR,
    Cli,
    actions,
    cli_process,
    finished,
    rows,
    run_status,
    task_runs,
)
from tests.integration.running.test_supervisor_sql import CHAIN

HOLD = """
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    Path(context.input_params["started"]).touch()
    release = Path(context.input_params["release"])
    while not release.exists():
        time.sleep(0.05)
    return ScriptResult(row_count=1)
"""
DONE = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    return ScriptResult(row_count=1)
"""


@pytest.fixture
def orders(project: ProjectOnDisk) -> ProjectOnDisk:
    project.migrate("0001_orders.sql", CHAIN)
    return project


def pauses(project: ProjectOnDisk) -> list[tuple[object, ...]]:
    found = rows(
        project,
        "SELECT p.PIPELINE_CODE AS pipeline, z.REASON AS reason, z.PAUSED_BY AS paused_by, "
        "z.RESUMED_BY AS resumed_by FROM AUD_PIPELINE_PAUSES z "
        "LEFT JOIN CFG_PIPELINES p ON p.PIPELINE_ID = z.PIPELINE_ID ORDER BY z.PAUSE_ID",
    )
    return [tuple(row.values()) for row in found]


def test_pause_and_resume_record_who_and_why(orders: ProjectOnDisk, cli: Cli) -> None:
    paused = cli.json("pause", "--pipeline_code", "orders", "--reason", "warehouse upgrade")
    assert pauses(orders) == [("orders", "warehouse upgrade", ACTOR, None)]
    resumed = cli.json("resume", "--pipeline_code", "orders")

    assert (paused.code, resumed.code) == (0, 0)
    assert paused.document()["pause_id"] == resumed.document()["pause_id"]
    assert resumed.document()["resumed_by"] == ACTOR
    assert pauses(orders) == [("orders", "warehouse upgrade", ACTOR, ACTOR)]
    assert [(a["pipeline"], a["actor"], a["outcome"]) for a in actions(orders, "pause")] == [
        ("orders", ACTOR, "REQUESTED")
    ]
    assert [a["outcome"] for a in actions(orders, "resume")] == ["REQUESTED"]


def test_a_second_pause_and_resuming_nothing_are_refused_naming_the_state(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    cli("pause", "--pipeline_code", "orders", "--reason", "first")

    again = cli("pause", "--pipeline_code", "orders", "--reason", "second")
    cli("resume", "--pipeline_code", "orders")
    nothing = cli("resume", "--pipeline_code", "orders")

    assert again.code == ExitCode.RUN_STATE
    assert f"pipeline orders is paused already (by {ACTOR}" in again.err
    assert "first" in again.err
    assert "etl-craft resume --pipeline orders" in again.err
    assert nothing.code == ExitCode.RUN_STATE
    assert "pipeline orders is not paused" in nothing.err
    assert [a["outcome"] for a in actions(orders, "pause")] == ["REQUESTED", "REFUSED"]


def test_resuming_a_pipeline_under_a_project_pause_names_the_project_pause(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    project = cli("pause", "--project", "--reason", "freeze")

    done = cli("resume", "--pipeline_code", "orders")
    lifted = cli("resume", "--project")

    assert project.code == 0, project.err
    assert done.code == ExitCode.RUN_STATE
    assert "the whole project is paused" in done.err
    assert "etl-craft resume --project" in done.err
    assert lifted.code == 0, lifted.err
    assert pauses(orders) == [(None, "freeze", ACTOR, ACTOR)]


def test_pause_needs_a_reason(orders: ProjectOnDisk, cli: Cli) -> None:
    done = cli("pause", "--pipeline_code", "orders")

    assert done.code == ExitCode.USAGE
    assert "--reason" in done.err
    assert pauses(orders) == []


def test_a_pause_mid_run_leaves_the_run_incomplete_and_a_run_after_resume_ends_it(
    project: ProjectOnDisk, tmp_path: Path, cli: Cli
) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    scripts = project.root / "ingestion_scripts"
    scripts.mkdir()
    (scripts / "hold.py").write_text(HOLD)
    (scripts / "done.py").write_text(DONE)
    project.migrate(
        "0001_held.sql",
        f"""
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
        SELECT PROJECT_ID, 'held' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'first', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'held';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'second', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'held';
        INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
        SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
         WHERE d.TASK_CODE = 'second' AND u.TASK_CODE = 'first';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT TASK_ID, x.N, x.V FROM CFG_TASKS, (
          SELECT 'SCRIPT' AS N, 'hold.py' AS V
          UNION ALL SELECT 'INPUT_PARAMS',
                           '{{"started": "{started}", "release": "{release}"}}') x
         WHERE TASK_CODE = 'first';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT TASK_ID, 'SCRIPT', 'done.py' FROM CFG_TASKS WHERE TASK_CODE = 'second';
        """,
    )
    owner = cli_process(project, "run", "--pipeline_code", "held")
    try:
        wait_for(started.exists, "the first task to start")
        paused = finished(cli_process(project, "pause", "--pipeline_code", "held", "--reason", "x"))
        assert paused.code == 0, paused.err
        release.touch()
        ran = finished(owner)
    finally:
        if owner.poll() is None:
            owner.kill()

    assert ran.code == ExitCode.INCOMPLETE, ran.out + ran.err
    (run_id,) = [
        row["r"] for row in rows(project, "SELECT PIPELINE_RUN_ID AS r FROM AUD_PIPELINES_RUN_LOG")
    ]
    assert run_status(project, run_id) == "IN-PROGRESS"
    assert task_runs(project, run_id) == {"first": ("SUCCESS", 1)}
    assert cli("resume", "--pipeline_code", "held").code == 0
    later = cli("run", "--pipeline_code", "held")
    assert later.code == 0, later.err
    assert run_status(project, run_id) == "SUCCESS"
    assert task_runs(project, run_id) == {"first": ("SUCCESS", 1), "second": ("SUCCESS", 1)}


def test_audit_lists_actions_and_metadata_changes(orders: ProjectOnDisk, cli: Cli) -> None:
    run_id = orders.new_run("orders")
    cli("pause", "--pipeline_code", "orders", "--reason", "upgrade")
    cli("mark", "--pipeline_code", "orders", "--status", "SUCCESS", "--reason", "by hand")

    done = cli.json("audit", "--pipeline_code", "orders")
    text = cli("audit")
    tomorrow = cli.json("audit", "--since", "2999-01-01")

    assert done.code == 0, done.err
    document = done.document()
    assert document["schema"] == "etl-craft/audit/1"
    listed = [(a["command"], a["actor"], a["run_id"]) for a in document["actions"]]
    assert listed == [("pause", ACTOR, None), ("mark", ACTOR, run_id)]
    assert document["actions"][1]["arguments"]["reason"] == "by hand"
    changes = {
        (c["table_name"], c["operation"], c["migration"]) for c in document["metadata_changes"]
    }
    assert ("CFG_PIPELINES", "INSERT", "0001_orders.sql") in changes
    assert ("CFG_TASKS", "INSERT", "0001_orders.sql") in changes
    assert {c["table_name"] for c in document["metadata_changes"]} == {"CFG_PIPELINES", "CFG_TASKS"}
    assert "reason: by hand" in text.out
    assert "CFG_TASK_PARAMETERS" in text.out
    assert tomorrow.document()["actions"] == []
    assert tomorrow.document()["metadata_changes"] == []


def test_audit_limit_shows_the_newest_rows_oldest_first(orders: ProjectOnDisk, cli: Cli) -> None:
    for reason in ("first", "second", "third"):
        cli("pause", "--pipeline_code", "orders", "--reason", reason)
        cli("resume", "--pipeline_code", "orders")

    done = cli.json("audit", "--pipeline_code", "orders", "--limit", "3")

    assert done.code == 0, done.err
    actions = [(a["command"], a["arguments"].get("reason")) for a in done.document()["actions"]]
    assert actions == [("resume", None), ("pause", "third"), ("resume", None)]
    changes = [c["change_id"] for c in done.document()["metadata_changes"]]
    assert len(changes) == 3
    everything = cli.json("audit", "--pipeline_code", "orders").document()["metadata_changes"]
    assert changes == [c["change_id"] for c in everything][-3:]


def test_history_prints_column_headers_above_its_runs(orders: ProjectOnDisk, cli: Cli) -> None:
    run_id = orders.new_run("orders")

    text = cli("history", "--pipeline_code", "orders")

    header, first = text.out.splitlines()[:2]
    assert header.split() == ["RUN", "STATUS", "RUN", "DATE", "TRIGGER", "RUN", "KEY", "BY"]
    assert first.split()[0] == str(run_id)
    assert header.index("STATUS") == first.index(first.split()[1])
