"""A backfill date judges no other pipeline's runs: SUCCESS edges are bypassed, FAILURE edges
are unmet (S2.A.5), and what the backfill admitted consumes nothing."""

from __future__ import annotations

import pytest

from etl_craft.scheduling.gatekeeper import BACKFILL_FAILURE
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.backfill.conftest import cross_edge
from tests.integration.control.conftest import Cli, one, rows
from tests.integration.running.test_ready_set import tasks_sql


@pytest.fixture
def pipelines(project: ProjectOnDisk, cli: Cli) -> None:
    """up.extract failed in its latest run; report.load needs it to succeed, report.alarm to fail."""
    project.migrate(
        "0001_pipelines.sql",
        tasks_sql("up", [("extract", "failing.py", "{}")], [])
        + tasks_sql("report", [("load", "quick.py", "{}"), ("alarm", "quick.py", "{}")], [])
        + cross_edge("load", "extract", "SUCCESS")
        + cross_edge("alarm", "extract", "FAILURE"),
    )
    assert cli("run", "--pipeline_code", "up").code == 1


def test_a_backfill_date_bypasses_success_edges_and_skips_failure_edges(
    project: ProjectOnDisk, cli: Cli, pipelines: None
) -> None:
    done = cli.json(
        "run", "--pipeline_code", "report", "--backfill", "2026-01-01:2026-01-02", "--reason", "r"
    )
    assert done.code == 0, done.out + done.err

    for run in done.document()["runs"]:
        run_id = int(run["run_id"])
        tasks = {task["task_code"]: task for task in run["tasks"]}
        assert tasks["load"]["status"] == "SUCCESS"
        assert tasks["alarm"]["status"] == "SKIPPED"
        assert tasks["alarm"]["message"] == f"skipped because {BACKFILL_FAILURE}: up.extract"
        decided = rows(
            project,
            "SELECT k.TASK_CODE AS task, d.RESULT AS result, d.REASON AS reason, "
            "d.SELECTED_PIPELINE_RUN_ID AS selected FROM AUD_GATE_DECISIONS d "
            "JOIN CFG_TASKS k ON k.TASK_ID = d.TASK_ID WHERE d.PIPELINE_RUN_ID = :r "
            "ORDER BY k.TASK_CODE",
            r=run_id,
        )
        assert decided == [
            {
                "task": "alarm",
                "result": "UNSATISFIED",
                "reason": f"{BACKFILL_FAILURE} (FAILURE dependency on up.extract)",
                "selected": None,
            },
            {
                "task": "load",
                "result": "BYPASSED",
                "reason": "SUCCESS dependency on up.extract counts as met on a backfill date; "
                "backfills judge no other pipeline's runs",
                "selected": None,
            },
        ]
    # A backfill consumes no upstream run: the next scheduled run still finds it unconsumed.
    assert one(project, "SELECT count(*) FROM AUD_DEPENDENCY_CONSUMPTION") == 0
