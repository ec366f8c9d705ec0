"""run --rerun ... --plan and run --backfill ... --plan: what would run and what it would
change, with nothing done and nothing recorded."""

from __future__ import annotations

from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import (
    Cli,
    actions,
    failed_orders_run,
    interventions,
    rows,
    task_runs,
)
from tests.integration.control.test_rerun_and_skip import FIX_LAND, REPORT


def run_count(project: ProjectOnDisk) -> int:
    return int(rows(project, "SELECT COUNT(*) AS n FROM AUD_PIPELINES_RUN_LOG")[0]["n"])


def test_a_rerun_plan_lists_the_task_runs_to_redo_and_what_they_change(
    project: ProjectOnDisk, cli: Cli
) -> None:
    run_id = failed_orders_run(project, cli, REPORT)
    project.migrate("0004_fix_land.sql", FIX_LAND)
    before = (task_runs(project, run_id), interventions(project, run_id), actions(project, "run"))

    done = cli.json(
        "run",
        "--pipeline_code",
        "orders",
        "--run-id",
        str(run_id),
        "--rerun",
        "--task_code",
        "land",
        "--plan",
    )

    assert done.code == 0, done.err
    plan = done.document()
    assert plan["schema"] == "etl-craft/run-action-plan/1"
    assert (plan["action"], plan["run_id"]) == ("rerun", run_id)
    assert [(t["task_code"], t["status"], t["target"]) for t in plan["tasks"]] == [
        ("land", "FAILED", "lnd.orders"),
        ("report", "SKIPPED", "dm.report"),
        ("summary", "SKIPPED", "dm.summary"),
    ]
    assert plan["targets"] == ["lnd.orders", "dm.report", "dm.summary"]
    land = plan["tasks"][0]
    assert land["columns"] == [
        "lnd.orders.order_id",
        "lnd.orders.amount",
        "dm.summary.revenue",
        "dm.report.revenue",
    ]
    after = (task_runs(project, run_id), interventions(project, run_id), actions(project, "run"))
    assert after == before


def test_a_backfill_plan_lists_every_task_once_for_the_dates_and_makes_no_run(
    project: ProjectOnDisk, cli: Cli
) -> None:
    failed_orders_run(project, cli, REPORT)
    runs, recorded = run_count(project), actions(project, "run")

    done = cli("run", "--pipeline_code", "orders", "--backfill", "2026-11-01:2026-11-03", "--plan")

    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0] == (
        "backfill of orders (3 date(s)) would run 4 task(s) writing 4 table(s); nothing was done"
    )
    assert lines[1] == "dates: 2026-11-01 to 2026-11-03"
    assert "  side: new, writes dm.side" in lines
    assert (run_count(project), actions(project, "run")) == (runs, recorded)


def test_plan_goes_with_rerun_or_backfill(project: ProjectOnDisk, cli: Cli) -> None:
    failed_orders_run(project, cli)
    done = cli("run", "--pipeline_code", "orders", "--plan")
    assert done.code != 0
    assert "--plan shows what rerun or backfill would do" in done.err
