"""etl-craft mark and reopen: the tables they change and the actor and reason they record."""

from __future__ import annotations

import pytest

from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import ExitCode
from etl_craft.enginedb.transitions import claim_attempt, create_task_run, queue_attempt
from tests.fixtures.metadata import TESTER
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import (
    ACTOR,
    BREAK_LAND,
    Cli,
    actions,
    interventions,
    mark,
    one,
    rows,
    run_status,
    task_runs,
)
from tests.integration.running.test_supervisor_sql import CHAIN

FOREIGN_OWNER = "elsewhere:4242:1700000000:abcd1234"


@pytest.fixture
def orders(project: ProjectOnDisk) -> ProjectOnDisk:
    project.migrate("0001_orders.sql", CHAIN)
    return project


def _claimed_elsewhere(project: ProjectOnDisk, run_id: int, task: str) -> int:
    """A task whose attempt another process has claimed and still holds."""
    task_id = one(project, "SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = :t", t=task)
    with project.engine.transaction(TESTER) as conn:
        task_run_id = create_task_run(conn, run_id, task_id, TESTER)
        attempt = queue_attempt(conn, task_run_id, TESTER, slot_kind=SlotKind.WAREHOUSE)
        claim_attempt(conn, attempt.attempt_id, SYSTEM, owner_id=FOREIGN_OWNER, lease_seconds=600)
    return attempt.attempt_id


def test_marking_a_task_of_an_ended_run_reopens_it_for_a_later_run(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    orders.migrate("0002_break_land.sql", BREAK_LAND)
    run_id = int(cli.json("run", "--pipeline_code", "orders").document()["run_id"])
    assert run_status(orders, run_id) == "FAILED"

    said = mark(cli, run_id, "land", "SUCCESS", "--rows", "3")

    assert "reopened" in said
    assert run_status(orders, run_id) == "IN-PROGRESS"
    land = rows(
        orders,
        "SELECT t.STATUS AS status, t.ROWS_WRITTEN AS rows_written, t.MESSAGE AS message "
        "FROM AUD_TASK_RUN_LOG t JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE k.TASK_CODE = 'land' AND t.PIPELINE_RUN_ID = :r",
        r=run_id,
    )
    assert land == [
        {
            "status": "SUCCESS",
            "rows_written": 3,
            "message": f"marked SUCCESS by {ACTOR}: loaded by hand",
        }
    ]
    assert interventions(orders, run_id) == [
        ("REOPEN", None, "FAILED", "IN-PROGRESS", "loaded by hand", ACTOR),
        ("MARK", "land", "FAILED", "SUCCESS", "loaded by hand", ACTOR),
    ]
    (action,) = actions(orders, "mark")
    assert (action["actor"], action["actor_kind"], action["outcome"]) == (
        ACTOR,
        "HUMAN",
        "REQUESTED",
    )
    assert (action["pipeline"], action["run_id"], action["task"]) == ("orders", run_id, "land")
    later = cli("run", "--pipeline_code", "orders", "--run-id", str(run_id))
    # summary, skipped because land failed, runs now; nothing was loaded by hand into
    # lnd.orders here, so it fails reading it and the run with it.
    assert later.code == ExitCode.FAILURE, later.out
    assert task_runs(orders, run_id)["summary"] == ("FAILED", 1)
    assert run_status(orders, run_id) == "FAILED"


def test_marking_a_task_that_never_ran_creates_its_task_run_as_marked(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    run_id = orders.new_run("orders")

    done = cli(
        "mark",
        "--pipeline_code",
        "orders",
        "--task_code",
        "side",
        "--status",
        "SUCCESS",
        "--rows",
        "5",
        "--reason",
        "side loaded by the vendor",
    )

    assert done.code == 0, done.err
    assert task_runs(orders, run_id) == {"side": ("SUCCESS", 0)}
    assert interventions(orders, run_id) == [
        ("MARK", "side", None, "SUCCESS", "side loaded by the vendor", ACTOR)
    ]
    assert run_status(orders, run_id) == "IN-PROGRESS"


def test_marking_the_run_ends_it_with_the_operator_as_its_ender(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    run_id = orders.new_run("orders")

    done = cli("mark", "--pipeline_code", "orders", "--status", "FAILED", "--reason", "bad day")

    assert done.code == 0, done.err
    ended = rows(
        orders,
        "SELECT STATUS AS status, ENDED_BY AS ended_by, ENDED_BY_KIND AS kind, MESSAGE AS message "
        "FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r",
        r=run_id,
    )
    assert ended == [
        {
            "status": "FAILED",
            "ended_by": ACTOR,
            "kind": "HUMAN",
            "message": f"marked FAILED by {ACTOR}: bad day",
        }
    ]
    assert interventions(orders, run_id) == [
        ("MARK", None, "IN-PROGRESS", "FAILED", "bad day", ACTOR)
    ]


def test_mark_is_refused_while_the_task_has_a_live_attempt_naming_it(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    run_id = orders.new_run("orders")
    attempt_id = _claimed_elsewhere(orders, run_id, "land")

    task = cli(
        "mark",
        "--pipeline_code",
        "orders",
        "--task_code",
        "land",
        "--status",
        "SUCCESS",
        "--reason",
        "done by hand",
    )
    whole = cli("mark", "--pipeline_code", "orders", "--status", "SUCCESS", "--reason", "done")

    for refused in (task, whole):
        assert refused.code == ExitCode.RUN_STATE
        assert f"attempt {attempt_id} CLAIMED owned by {FOREIGN_OWNER}" in refused.err
        assert "etl-craft cancel" in refused.err
    assert task_runs(orders, run_id) == {"land": ("IN-PROGRESS", 1)}
    assert run_status(orders, run_id) == "IN-PROGRESS"
    assert interventions(orders, run_id) == []
    recorded = actions(orders, "mark")
    assert [(a["outcome"], a["exit_code"], a["actor"]) for a in recorded] == [
        ("REFUSED", ExitCode.RUN_STATE, ACTOR),
        ("REFUSED", ExitCode.RUN_STATE, ACTOR),
    ]


def test_mark_without_a_run_id_refuses_two_live_runs_listing_both(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    first = orders.new_run("orders", "manual:first")
    second = orders.new_run("orders", "manual:second")

    done = cli("mark", "--pipeline_code", "orders", "--status", "SKIPPED", "--reason", "dup")

    assert done.code == ExitCode.RUN_STATE
    assert f"run {first} key manual:first" in done.err
    assert f"run {second} key manual:second" in done.err
    assert "name one with --run." in done.err


def test_mark_needs_a_reason(orders: ProjectOnDisk, cli: Cli) -> None:
    run_id = orders.new_run("orders")

    done = cli("mark", "--pipeline_code", "orders", "--status", "SUCCESS", "--reason", " ")

    assert done.code == ExitCode.USAGE
    assert "--reason" in done.err
    assert run_status(orders, run_id) == "IN-PROGRESS"


def test_reopen_makes_an_ended_run_live_and_records_why(orders: ProjectOnDisk, cli: Cli) -> None:
    run_id = orders.new_run("orders")
    cli("mark", "--pipeline_code", "orders", "--status", "FAILED", "--reason", "stop")

    done = cli(
        "reopen", "--pipeline_code", "orders", "--run-id", str(run_id), "--reason", "try again"
    )

    assert done.code == 0, done.err
    assert run_status(orders, run_id) == "IN-PROGRESS"
    assert interventions(orders, run_id)[-1] == (
        "REOPEN",
        None,
        "FAILED",
        "IN-PROGRESS",
        "try again",
        ACTOR,
    )
    assert [a["run_id"] for a in actions(orders, "reopen")] == [run_id]


def test_reopen_is_refused_while_another_run_of_the_pipeline_is_live(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    old = orders.new_run("orders", "manual:old")
    cli("mark", "--pipeline_code", "orders", "--status", "SUCCESS", "--reason", "done")
    live = orders.new_run("orders", "manual:live")

    done = cli("reopen", "--pipeline_code", "orders", "--run-id", str(old), "--reason", "again")
    still = cli("reopen", "--pipeline_code", "orders", "--run-id", str(live), "--reason", "x")

    assert done.code == ExitCode.RUN_STATE
    assert f"run {live} key manual:live" in done.err
    assert "cancel it first" in done.err
    assert run_status(orders, old) == "SUCCESS"
    assert still.code == ExitCode.RUN_STATE
    assert "not ended" in still.err
