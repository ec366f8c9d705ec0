"""run --rerun re-runs what a failure skipped, in dependency order; run --skip records a skip."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import ExitCode
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import (
    ACTOR,
    BREAK_LAND,
    Cli,
    actions,
    failed_orders_run,
    interventions,
    rows,
    run_status,
    task_runs,
)
from tests.integration.running.test_supervisor_sql import CHAIN

FIX_LAND = """
UPDATE CFG_TASK_PARAMETERS
   SET PARAMETER_VALUE = 'SELECT * FROM (VALUES (1, 10.5), (2, 20.0), (3, 7.25)) v(order_id, amount)'
 WHERE PARAMETER_NAME = 'SOURCE_SQL' AND TASK_ID = (SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = 'land');
"""
# summary depends on land, and report on summary: both are skipped when land fails.
REPORT = """
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'report', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'report' AND u.TASK_CODE = 'summary';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, x.N, x.V FROM CFG_TASKS, (
  SELECT 'ACTION' AS N, 'CREATE_TABLE' AS V
  UNION ALL SELECT 'TARGET_OBJECT', 'dm.report'
  UNION ALL SELECT 'SOURCE_SQL', 'SELECT revenue FROM dm.summary') x
 WHERE TASK_CODE = 'report';
"""


@pytest.fixture
def failed_run(project: ProjectOnDisk, cli: Cli) -> int:
    """A run of orders where land failed: summary and report were skipped, side succeeded."""
    run_id = failed_orders_run(project, cli, REPORT)
    assert task_runs(project, run_id) == {
        "land": ("FAILED", 1),
        "summary": ("SKIPPED", 0),
        "report": ("SKIPPED", 0),
        "side": ("SUCCESS", 1),
    }
    project.migrate("0004_fix_land.sql", FIX_LAND)
    return run_id


def _rerun(cli: Cli, run_id: int, task: str, *extra: str) -> tuple[int, dict[str, object]]:
    done = cli.json(
        "run",
        "--pipeline_code",
        "orders",
        "--run-id",
        str(run_id),
        "--rerun",
        "--task_code",
        task,
        "--reason",
        "source fixed",
        *extra,
    )
    assert done.out, done.err
    return done.code, done.document()


def test_rerun_of_a_failed_task_reruns_what_its_failure_skipped(
    project: ProjectOnDisk, cli: Cli, failed_run: int
) -> None:
    code, document = _rerun(cli, failed_run, "land")

    assert code == 0, document
    assert run_status(project, failed_run) == "SUCCESS"
    assert task_runs(project, failed_run) == {
        "land": ("SUCCESS", 2),
        "summary": ("SUCCESS", 1),
        "report": ("SUCCESS", 1),
        "side": ("SUCCESS", 1),
    }
    # The run judges the skips land's failure caused again once land has run: one stage.
    assert document["stages"] == [["land"]]
    assert document["still_to_rerun"] == []
    recorded = interventions(project, failed_run)
    assert ("RERUN", "land", "FAILED", "IN-PROGRESS", "source fixed", ACTOR) in recorded
    assert [row[0] for row in recorded].count("REOPEN") == 1
    (action,) = actions(project, "run")[-1:]
    assert (action["actor"], action["outcome"], action["run_id"], action["task"]) == (
        ACTOR,
        "REQUESTED",
        failed_run,
        "land",
    )


def test_rerun_runs_the_downstream_only_after_its_upstream_ended(
    project: ProjectOnDisk, cli: Cli, failed_run: int
) -> None:
    _rerun(cli, failed_run, "land")
    code, document = _rerun(cli, failed_run, "land", "--with-downstream")

    assert code == 0, document
    assert task_runs(project, failed_run) == {
        "land": ("SUCCESS", 3),
        "summary": ("SUCCESS", 2),
        "report": ("SUCCESS", 2),
        "side": ("SUCCESS", 1),
    }
    attempts = rows(
        project,
        "SELECT k.TASK_CODE AS task, a.STARTED_AT AS started, a.ENDED_AT AS ended "
        "FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE t.PIPELINE_RUN_ID = :r "
        "AND a.ATTEMPT_NUMBER = (SELECT max(b.ATTEMPT_NUMBER) FROM AUD_TASK_ATTEMPTS b "
        "WHERE b.TASK_RUN_ID = a.TASK_RUN_ID)",
        r=failed_run,
    )
    latest = {row["task"]: row for row in attempts}
    assert str(latest["land"]["ended"]) <= str(latest["summary"]["started"])
    assert str(latest["summary"]["ended"]) <= str(latest["report"]["started"])
    assert document["stages"] == [["land"], ["summary"], ["report"]]


def test_a_rerun_that_fails_again_leaves_the_skipped_tasks_and_the_run_failed(
    project: ProjectOnDisk, cli: Cli, failed_run: int
) -> None:
    project.migrate("0005_break_again.sql", BREAK_LAND)

    code, document = _rerun(cli, failed_run, "land")

    assert code == ExitCode.FAILURE
    assert run_status(project, failed_run) == "FAILED"
    assert task_runs(project, failed_run)["summary"] == ("SKIPPED", 0)
    assert document["still_to_rerun"] == ["report", "summary"]
    assert "dependencies are not met" in str(document["message"])


def test_rerun_refuses_a_task_whose_upstream_failed_naming_it(
    project: ProjectOnDisk, cli: Cli, failed_run: int
) -> None:
    done = cli(
        "run",
        "--pipeline_code",
        "orders",
        "--run-id",
        str(failed_run),
        "--rerun",
        "--task_code",
        "summary",
        "--reason",
        "try",
    )

    assert done.code == ExitCode.RUN_STATE
    assert "land failed" in done.err
    assert "--with-downstream" in done.err
    assert run_status(project, failed_run) == "FAILED"
    assert actions(project, "run")[-1]["outcome"] == "REFUSED"


def test_rerun_needs_a_reason(project: ProjectOnDisk, cli: Cli, failed_run: int) -> None:
    done = cli(
        "run",
        "--pipeline_code",
        "orders",
        "--run-id",
        str(failed_run),
        "--rerun",
        "--task_code",
        "land",
    )

    assert done.code == ExitCode.USAGE
    assert "--reason" in done.err
    assert run_status(project, failed_run) == "FAILED"


def test_skip_records_an_operator_skip_and_the_run_plans_around_it(
    project: ProjectOnDisk, cli: Cli
) -> None:
    project.migrate("0001_orders.sql", CHAIN)
    run_id = project.new_run("orders")

    done = cli(
        "run",
        "--pipeline_code",
        "orders",
        "--skip",
        "--task_code",
        "side",
        "--reason",
        "side table retired",
    )
    assert done.code == 0, done.err
    assert "side" in done.out
    assert "SKIPPED" in done.out
    ran = cli("run", "--pipeline_code", "orders", "--run-id", str(run_id))

    assert ran.code == 0, ran.err
    assert task_runs(project, run_id) == {
        "side": ("SKIPPED", 0),
        "land": ("SUCCESS", 1),
        "summary": ("SUCCESS", 1),
    }
    assert interventions(project, run_id) == [
        ("SKIP", "side", None, "SKIPPED", "side table retired", ACTOR)
    ]
    message = rows(
        project,
        "SELECT t.MESSAGE AS m FROM AUD_TASK_RUN_LOG t JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE k.TASK_CODE = 'side'",
    )[0]["m"]
    assert message == f"skipped by {ACTOR}: side table retired"
    (action,) = [a for a in actions(project, "run") if '"skip": true' in a["arguments"]]
    assert (action["actor"], action["run_id"], action["task"]) == (ACTOR, run_id, "side")


def test_skip_refuses_a_task_that_has_run_naming_its_task_run(
    project: ProjectOnDisk, cli: Cli, failed_run: int
) -> None:
    cli("reopen", "--pipeline_code", "orders", "--run-id", str(failed_run), "--reason", "look")

    done = cli(
        "run",
        "--pipeline_code",
        "orders",
        "--skip",
        "--task_code",
        "land",
        "--reason",
        "no",
    )

    assert done.code == ExitCode.RUN_STATE
    assert "already has task run" in done.err
    assert "etl-craft mark" in done.err
    assert task_runs(project, failed_run)["land"] == ("FAILED", 1)
