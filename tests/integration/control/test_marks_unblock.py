"""A mark changes an outcome, so the engine's skips that judged the old one are judged again."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

from etl_craft.core.errors import ExitCode
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import (
    ACTOR,
    BREAK_LAND,
    Cli,
    interventions,
    mark,
    rows,
    run_status,
    task_runs,
)
from tests.integration.control.test_rerun_and_skip import REPORT
from tests.integration.running.test_supervisor_sql import CHAIN

# Beside CHAIN (land -> summary, side) and REPORT (summary -> report): big needs land to
# have written rows (HAS_DATA), rescue runs only when land fails (FAILURE) and closing runs
# after summary whatever became of it (ALWAYS).
EDGES = """
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, x.C, 'SQL' FROM CFG_PIPELINES,
  (SELECT 'big' AS C UNION ALL SELECT 'rescue' UNION ALL SELECT 'closing') x
 WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE)
SELECT d.TASK_ID, u.TASK_ID, x.T FROM CFG_TASKS d, CFG_TASKS u, (
  SELECT 'big' AS D, 'land' AS U, 'HAS_DATA' AS T
  UNION ALL SELECT 'rescue', 'land', 'FAILURE'
  UNION ALL SELECT 'closing', 'summary', 'ALWAYS') x
 WHERE d.TASK_CODE = x.D AND u.TASK_CODE = x.U;
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'ACTION', 'CREATE_TABLE' FROM CFG_TASKS WHERE TASK_CODE IN ('big', 'rescue', 'closing');
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'TARGET_OBJECT', 'dm.' || TASK_CODE FROM CFG_TASKS
 WHERE TASK_CODE IN ('big', 'rescue', 'closing');
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SOURCE_SQL', 'SELECT count(*) AS orders FROM lnd.orders'
  FROM CFG_TASKS WHERE TASK_CODE = 'big';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SOURCE_SQL', 'SELECT 1 AS ran' FROM CFG_TASKS WHERE TASK_CODE IN ('rescue', 'closing');
"""


@pytest.fixture
def orders(project: ProjectOnDisk) -> ProjectOnDisk:
    project.migrate("0001_orders.sql", CHAIN)
    project.migrate("0002_report.sql", REPORT)
    project.migrate("0003_edges.sql", EDGES)
    return project


def _failed_land(orders: ProjectOnDisk, cli: Cli) -> int:
    orders.migrate("0004_break_land.sql", BREAK_LAND)
    done = cli.json("run", "--pipeline_code", "orders")
    assert done.code == ExitCode.FAILURE, done.err
    run_id = int(done.document()["run_id"])
    assert task_runs(orders, run_id) == {
        "land": ("FAILED", 1),
        "summary": ("SKIPPED", 0),
        "report": ("SKIPPED", 0),
        "big": ("SKIPPED", 0),
        "rescue": ("SUCCESS", 1),
        "closing": ("SUCCESS", 1),
        "side": ("SUCCESS", 1),
    }
    return run_id


def _load_by_hand(orders: ProjectOnDisk) -> None:
    """What the operator did instead of land: the rows it would have written."""
    with duckdb.connect(str(orders.root / "warehouse.duckdb")) as warehouse:
        warehouse.execute("CREATE SCHEMA IF NOT EXISTS lnd")
        warehouse.execute(
            "CREATE TABLE lnd.orders AS SELECT * FROM (VALUES (1, 10.5), (2, 20.0), (3, 7.25)) "
            "v(order_id, amount)"
        )


def _messages(orders: ProjectOnDisk, run_id: int) -> dict[str, Any]:
    found = rows(
        orders,
        "SELECT k.TASK_CODE AS task, t.MESSAGE AS message FROM AUD_TASK_RUN_LOG t "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE t.PIPELINE_RUN_ID = :r",
        r=run_id,
    )
    return {row["task"]: row["message"] for row in found}


def _warehouse(orders: ProjectOnDisk, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(orders.root / "warehouse.duckdb"), read_only=True) as warehouse:
        return warehouse.execute(sql).fetchall()


def test_marking_a_failed_task_success_runs_what_its_failure_skipped(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    run_id = _failed_land(orders, cli)
    _load_by_hand(orders)

    said = mark(cli, run_id, "land", "SUCCESS", "--rows", "3")

    assert "runnable again: summary, big" in said
    changed = f"runnable again: land was marked SUCCESS by {ACTOR}: loaded by hand"
    messages = _messages(orders, run_id)
    assert (messages["summary"], messages["big"]) == (changed, changed)
    assert run_status(orders, run_id) == "IN-PROGRESS"
    assert [row[0] for row in interventions(orders, run_id)] == ["REOPEN", "MARK"]

    later = cli("run", "--pipeline_code", "orders", "--run-id", str(run_id))

    assert later.code == 0, later.out
    assert run_status(orders, run_id) == "SUCCESS"
    # report was skipped because summary was: it is judged again once summary has run.
    # rescue and closing ran when land failed; what ran keeps its outcome.
    assert task_runs(orders, run_id) == {
        "land": ("SUCCESS", 1),
        "summary": ("SUCCESS", 1),
        "report": ("SUCCESS", 1),
        "big": ("SUCCESS", 1),
        "rescue": ("SUCCESS", 1),
        "closing": ("SUCCESS", 1),
        "side": ("SUCCESS", 1),
    }
    summary = _warehouse(orders, "SELECT orders, revenue FROM dm.summary")
    assert [(row[0], float(row[1])) for row in summary] == [(3, 37.75)]
    assert [float(row[0]) for row in _warehouse(orders, "SELECT revenue FROM dm.report")] == [37.75]
    assert _warehouse(orders, "SELECT orders FROM dm.big") == [(3,)]


def test_a_has_data_dependency_is_judged_on_the_row_count_the_mark_states(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    run_id = _failed_land(orders, cli)
    _load_by_hand(orders)

    said = mark(cli, run_id, "land", "SUCCESS", "--rows", "0")

    assert "runnable again: summary;" in said
    assert task_runs(orders, run_id)["big"] == ("SKIPPED", 0)
    assert _messages(orders, run_id)["big"] == (
        "skipped because land wrote no rows (HAS_DATA); judged again after land was marked "
        f"SUCCESS by {ACTOR}: loaded by hand"
    )
    later = cli("run", "--pipeline_code", "orders", "--run-id", str(run_id))
    assert later.code == 0, later.out
    assert task_runs(orders, run_id)["big"] == ("SKIPPED", 0)
    assert task_runs(orders, run_id)["report"] == ("SUCCESS", 1)


def test_marking_a_succeeded_task_failed_runs_its_failure_path_and_fails_the_run(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    done = cli.json("run", "--pipeline_code", "orders")
    assert done.code == 0, done.err
    run_id = int(done.document()["run_id"])
    assert task_runs(orders, run_id)["rescue"] == ("SKIPPED", 0)

    said = mark(cli, run_id, "land", "FAILED")

    assert "runnable again: rescue;" in said
    assert _messages(orders, run_id)["rescue"] == (
        f"runnable again: land was marked FAILED by {ACTOR}: loaded by hand"
    )
    later = cli("run", "--pipeline_code", "orders", "--run-id", str(run_id))
    assert later.code == ExitCode.FAILURE, later.out
    assert run_status(orders, run_id) == "FAILED"
    # What ran on land's success keeps its outcome; the FAILURE path runs now.
    assert task_runs(orders, run_id) == {
        "land": ("FAILED", 1),
        "summary": ("SUCCESS", 1),
        "report": ("SUCCESS", 1),
        "big": ("SUCCESS", 1),
        "rescue": ("SUCCESS", 1),
        "closing": ("SUCCESS", 1),
        "side": ("SUCCESS", 1),
    }
    assert _warehouse(orders, "SELECT ran FROM dm.rescue") == [(1,)]
