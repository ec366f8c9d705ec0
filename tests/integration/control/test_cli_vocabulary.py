"""status without a run, a mark that changes nothing, and rerun as a command of its own."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import ExitCode
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import (
    Cli,
    actions,
    failed_orders_run,
    interventions,
    rows,
    run_status,
)
from tests.integration.running.test_supervisor_sql import CHAIN


@pytest.fixture
def orders(project: ProjectOnDisk) -> ProjectOnDisk:
    project.migrate("0001_orders.sql", CHAIN)
    return project


def test_status_without_a_run_shows_the_pipeline_s_latest_run(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    none_yet = cli("status", "--pipeline", "orders")
    assert none_yet.code == ExitCode.NOT_FOUND
    assert "pipeline orders has no runs yet" in none_yet.err

    first = int(cli.json("run", "--pipeline", "orders").document()["run_id"])
    second = int(cli.json("run", "--pipeline", "orders", "--run-key", "again").document()["run_id"])
    assert second > first

    shown = cli.json("status", "--pipeline", "orders")

    assert shown.code == 0, shown.err
    assert shown.document()["run_id"] == second
    assert shown.document()["status"] == "SUCCESS"
    text = cli("status", "--pipeline", "orders")
    assert text.out.startswith(f"run {second} of orders (again, ")


def test_a_mark_that_changes_nothing_is_refused_and_not_recorded(
    project: ProjectOnDisk, cli: Cli
) -> None:
    run_id = failed_orders_run(project, cli)
    ended_at = rows(
        project,
        "SELECT END_DATE AS e FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r",
        r=run_id,
    )

    same_run = cli(
        "mark",
        "--pipeline",
        "orders",
        "--run",
        str(run_id),
        "--status",
        "FAILED",
        "--reason",
        "again",
    )
    land_status = rows(
        project,
        "SELECT t.STATUS AS s FROM AUD_TASK_RUN_LOG t JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE t.PIPELINE_RUN_ID = :r AND k.TASK_CODE = 'land'",
        r=run_id,
    )[0]["s"]
    same_task = cli(
        "mark",
        "--pipeline",
        "orders",
        "--run",
        str(run_id),
        "--task",
        "land",
        "--status",
        land_status,
        "--reason",
        "again",
    )

    assert same_run.code == ExitCode.RUN_STATE
    assert f"mark of run {run_id} of orders refused: it is already FAILED" in same_run.err
    assert same_task.code == ExitCode.RUN_STATE
    assert f"mark of task land in run {run_id} refused: it is already {land_status}" in (
        same_task.err
    )
    assert interventions(project, run_id) == []
    assert run_status(project, run_id) == "FAILED"
    assert (
        rows(
            project,
            "SELECT END_DATE AS e FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r",
            r=run_id,
        )
        == ended_at
    )
    assert [row["outcome"] for row in actions(project, "mark")] == ["REFUSED", "REFUSED"]


def test_rerun_is_a_command_and_run_rerun_still_works_with_a_warning(
    project: ProjectOnDisk, cli: Cli
) -> None:
    run_id = failed_orders_run(project, cli)

    planned = cli.json(
        "rerun", "--pipeline", "orders", "--run", str(run_id), "--task", "land", "--plan"
    )
    old = cli(
        "run",
        "--pipeline_code",
        "orders",
        "--run-id",
        str(run_id),
        "--task_code",
        "land",
        "--rerun",
        "--plan",
    )

    assert planned.code == 0, planned.err
    assert planned.document()["action"] == "rerun"
    assert planned.document()["tasks"][0]["task_code"] == "land"
    assert old.code == 0, old.err
    assert "--rerun is deprecated and will be removed in 2.0; use etl-craft rerun" in old.err
    assert "--pipeline_code is deprecated" in old.err
    assert (
        old.out.splitlines()[0]
        == cli(
            "rerun", "--pipeline", "orders", "--run", str(run_id), "--task", "land", "--plan"
        ).out.splitlines()[0]
    )
