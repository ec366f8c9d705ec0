"""etl-craft explain over runs the supervisor built, on SQLite and PostgreSQL Engine DBs."""

from __future__ import annotations

from typing import Any

from etl_craft.core.errors import ExitCode
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import Cli
from tests.integration.control.test_rerun_and_skip import FIX_LAND
from tests.integration.running.test_supervisor_sql import CHAIN

SALES = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'sales' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'publish', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'sales';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'summary' AND u.TASK_CODE = 'publish';
INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID)
SELECT d.PIPELINE_ID, u.PIPELINE_ID FROM CFG_PIPELINES d, CFG_PIPELINES u
 WHERE d.PIPELINE_CODE = 'orders' AND u.PIPELINE_CODE = 'sales';
"""
DECIDE = (
    "INSERT INTO AUD_GATE_DECISIONS (PIPELINE_RUN_ID, TASK_ID, PIPELINE_DEPENDENCY_ID, "
    "TASK_DEPENDENCY_ID, RESULT, REASON, DECIDED_AT, DECIDED_BY, DECIDED_BY_KIND) "
)
PIPELINE_GATE = ("sales", None, "SATISFIED", "run 11 of sales succeeded")


def explain(cli: Cli, run_id: int, task: str) -> dict[str, Any]:
    done = cli.json(
        "explain", "--pipeline_code", "orders", "--task_code", task, "--run-id", str(run_id)
    )
    assert done.code == 0, done.err
    return done.document()


def rerun_command(run_id: int, task: str) -> str:
    return f"etl-craft rerun --pipeline orders --run {run_id} --task {task} --reason ..."


def test_explain_of_a_skipped_task_names_the_failure_and_the_rerun(
    cli: Cli, failed_run: int
) -> None:
    sentence = "summary was skipped because land failed; rerun land with " + rerun_command(
        failed_run, "land"
    )
    document = explain(cli, failed_run, "summary")

    assert document["schema"] == "etl-craft/explain/1"
    assert document["sentence"] == sentence
    assert (document["state"], document["task_status"], document["attempts"]) == (
        "SKIPPED",
        "SKIPPED",
        0,
    )
    assert (document["run_status"], document["paused"]) == ("FAILED", False)
    assert [
        (d["upstream"], d["type"], d["upstream_status"], d["met"]) for d in document["dependencies"]
    ] == [("land", "SUCCESS", "FAILED", False)]
    text = cli(
        "explain",
        "--pipeline_code",
        "orders",
        "--task_code",
        "summary",
        "--run-id",
        str(failed_run),
    )
    assert text.code == 0, text.err
    assert text.out.splitlines()[:3] == [
        f"summary in run {failed_run} of orders ({document['run_key']}): SKIPPED",
        f"  {sentence}",
        "  run: FAILED, paused: no, cancel pending: no",
    ]
    assert "    land  SUCCESS dependency  upstream FAILED  NOT MET" in text.out.splitlines()


def test_explain_of_a_failed_task_reads_its_error_from_the_attempt(
    cli: Cli, failed_run: int
) -> None:
    document = explain(cli, failed_run, "land")

    assert document["state"] == "FAILED"
    assert document["latest_error"]
    assert document["sentence"].startswith(
        f"land failed on attempt 1 of 1: {document['latest_error']}"
    )
    assert document["retry"] == {
        "retries": 0,
        "delay_seconds": 60.0,
        "backoff": 2.0,
        "next_attempt": None,
        "not_before": None,
    }


def test_explain_of_a_succeeded_task_and_of_the_skipped_one_after_its_rerun(
    project: ProjectOnDisk, cli: Cli, failed_run: int
) -> None:
    side = explain(cli, failed_run, "side")
    assert (side["state"], side["sentence"]) == (
        "SUCCEEDED",
        f"side succeeded on attempt 1 and wrote 1 row; to run it again: "
        f"{rerun_command(failed_run, 'side')}",
    )

    project.migrate("0003_fix_land.sql", FIX_LAND)
    rerun = cli(
        "run",
        "--pipeline_code",
        "orders",
        "--run-id",
        str(failed_run),
        "--rerun",
        "--task_code",
        "land",
        "--reason",
        "source fixed",
    )
    assert rerun.code == 0, rerun.err

    summary = explain(cli, failed_run, "summary")
    assert (summary["state"], summary["attempts"]) == ("SUCCEEDED", 1)
    assert summary["sentence"] == (
        f"summary succeeded on attempt 1 and wrote 1 row; to run it again: "
        f"{rerun_command(failed_run, 'summary')}"
    )
    assert [(d["upstream"], d["upstream_status"], d["met"]) for d in summary["dependencies"]] == [
        ("land", "SUCCESS", True)
    ]


def test_explain_reads_the_gate_waits_and_decisions_of_the_task(
    project: ProjectOnDisk, cli: Cli
) -> None:
    project.migrate("0001_orders.sql", CHAIN)
    project.migrate("0002_sales.sql", SALES)
    run_id = project.new_run("orders")
    with project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            DECIDE + "SELECT :r, NULL, PIPELINE_DEPENDENCY_ID, NULL, 'SATISFIED', "
            "'run 11 of sales succeeded', '2026-11-30 05:59:00.000000', 'system', 'SYSTEM' "
            "FROM CFG_PIPELINE_DEPENDENCY",
            r=run_id,
        )
        execute(
            conn,
            "INSERT INTO AUD_GATE_WAITS (PIPELINE_RUN_ID, TASK_ID, FIRST_CHECK_AT, NEXT_CHECK_AT, "
            "LOOKS, WAIT_UNTIL, LAST_REASON) SELECT :r, TASK_ID, '2026-11-30 06:00:00.000000', "
            "'2026-11-30 06:05:00.000000', 2, '2026-11-30 12:00:00.000000', "
            "'run 12 of sales is IN-PROGRESS' FROM CFG_TASKS WHERE TASK_CODE = 'summary'",
            r=run_id,
        )
    waiting = explain(cli, run_id, "summary")
    assert waiting["state"] == "WAITING_ON_GATE"
    assert waiting["sentence"] == (
        "summary waits on a gate on sales.publish (SUCCESS dependency): run 12 of sales is "
        "IN-PROGRESS; the gate looks again at 2026-11-30 06:05:00 UTC and gives up at "
        "2026-11-30 12:00:00 UTC"
    )
    assert [(w["looks"], w["resolved_at"]) for w in waiting["gate_waits"]] == [(2, None)]
    assert decisions(waiting) == [PIPELINE_GATE]

    with project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            DECIDE + "SELECT :r, d.TASK_ID, NULL, d.TASK_DEPENDENCY_ID, 'UNSATISFIED', "
            "'no SUCCESS run of sales by WAIT_UNTIL', '2026-11-30 12:00:00.000000', 'system', "
            "'SYSTEM' FROM CFG_TASK_DEPENDENCY d JOIN CFG_TASKS u "
            "ON u.TASK_ID = d.DEPENDS_ON_TASK_ID WHERE u.TASK_CODE = 'publish'",
            r=run_id,
        )
    decided = explain(cli, run_id, "summary")
    assert decided["state"] == "UNSATISFIABLE"
    assert decided["sentence"] == (
        "summary cannot run because the gate on sales.publish decided UNSATISFIED: no SUCCESS "
        f"run of sales by WAIT_UNTIL, so run {run_id} skips it; a new run of orders judges its "
        "gates again"
    )
    assert decisions(decided) == [
        PIPELINE_GATE,
        ("sales", "publish", "UNSATISFIED", "no SUCCESS run of sales by WAIT_UNTIL"),
    ]


def decisions(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (g["upstream_pipeline"], g["upstream_code"], g["result"], g["reason"])
        for g in document["gate_decisions"]
    ]


def test_explain_without_a_run_id_refuses_when_no_run_is_live(cli: Cli, failed_run: int) -> None:
    done = cli("explain", "--pipeline_code", "orders", "--task_code", "summary")

    assert done.code == ExitCode.RUN_STATE
    assert "has 0 runs in progress, so no run is implied; name one with --run." in done.err
    assert f"run {failed_run} (FAILED" in done.err


def test_explain_of_an_unknown_task_lists_the_pipeline_tasks(cli: Cli, failed_run: int) -> None:
    done = cli(
        "explain", "--pipeline_code", "orders", "--task_code", "nope", "--run-id", str(failed_run)
    )

    assert done.code == ExitCode.NOT_FOUND
    assert (
        "pipeline orders has no active task 'nope'; its tasks are land, side, summary" in done.err
    )
