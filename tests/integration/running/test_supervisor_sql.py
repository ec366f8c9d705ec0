"""A run supervised in the foreground: real task processes, a real DuckDB warehouse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project

CHAIN = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, MAX_PARALLEL_TASKS)
SELECT PROJECT_ID, 'orders', 2 FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'land', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'summary', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'side', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'summary' AND u.TASK_CODE = 'land';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'ACTION', 'CREATE_TABLE' FROM CFG_TASKS WHERE TASK_CODE IN ('land', 'summary', 'side');
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'TARGET_OBJECT', 'lnd.orders' FROM CFG_TASKS WHERE TASK_CODE = 'land';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SOURCE_SQL', 'SELECT * FROM (VALUES (1, 10.5), (2, 20.0), (3, 7.25)) v(order_id, amount)'
  FROM CFG_TASKS WHERE TASK_CODE = 'land';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'TARGET_OBJECT', 'dm.summary' FROM CFG_TASKS WHERE TASK_CODE = 'summary';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SOURCE_SQL', 'SELECT count(*) AS orders, sum(amount) AS revenue FROM lnd.orders'
  FROM CFG_TASKS WHERE TASK_CODE = 'summary';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'TARGET_OBJECT', 'dm.side' FROM CFG_TASKS WHERE TASK_CODE = 'side';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SOURCE_SQL', 'SELECT 1 AS one' FROM CFG_TASKS WHERE TASK_CODE = 'side';
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    made.migrate("0001_orders.sql", CHAIN)
    yield made
    made.engine.dispose()


def supervise(project: ProjectOnDisk, run_id: int) -> str:
    return project.supervisor(poll_seconds=0.5).supervise(run_id).status.value


def task_statuses(project: ProjectOnDisk, run_id: int) -> dict[str, tuple[str, int | None]]:
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT k.TASK_CODE, t.STATUS, t.ROWS_WRITTEN FROM AUD_TASK_RUN_LOG t "
            "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE t.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).all()
    return {row[0]: (row[1], row[2]) for row in rows}


def test_a_chain_runs_to_success_and_writes_the_warehouse(project: ProjectOnDisk) -> None:
    run_id = project.new_run("orders")
    assert supervise(project, run_id) == "SUCCESS"
    assert task_statuses(project, run_id) == {
        "land": ("SUCCESS", 3),
        "summary": ("SUCCESS", 1),
        "side": ("SUCCESS", 1),
    }
    with duckdb.connect(str(project.root / "warehouse.duckdb"), read_only=True) as warehouse:
        orders = warehouse.execute("SELECT order_id, amount FROM lnd.orders ORDER BY 1").fetchall()
        summary = warehouse.execute("SELECT orders, revenue FROM dm.summary").fetchall()
        writers = warehouse.execute(
            "SELECT DISTINCT CREATED_BY, PIPELINE_RUN_ID FROM lnd.orders"
        ).fetchall()
    assert [(row[0], float(row[1])) for row in orders] == [(1, 10.5), (2, 20.0), (3, 7.25)]
    assert [(row[0], float(row[1])) for row in summary] == [(3, 37.75)]
    assert writers == [("orders.land", run_id)]


def test_a_failure_skips_its_downstream_and_fails_the_run(project: ProjectOnDisk) -> None:
    project.migrate(
        "0002_break_land.sql",
        """
        UPDATE CFG_TASK_PARAMETERS SET PARAMETER_VALUE = 'SELECT CAST(''x'' AS INTEGER) AS order_id'
         WHERE PARAMETER_NAME = 'SOURCE_SQL'
           AND TASK_ID = (SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = 'land');
        """,
    )
    run_id = project.new_run("orders", "manual:broken")
    assert supervise(project, run_id) == "FAILED"
    statuses = task_statuses(project, run_id)
    assert statuses["land"][0] == "FAILED"
    assert statuses["summary"][0] == "SKIPPED"
    assert statuses["side"][0] == "SUCCESS"
    with project.engine.read() as conn:
        message, error, log_tail = execute(
            conn,
            "SELECT s.MESSAGE, l.ERROR_MESSAGE, l.TASK_LOG FROM AUD_TASK_RUN_LOG s, AUD_TASK_RUN_LOG l "
            "JOIN CFG_TASKS k ON k.TASK_ID = l.TASK_ID WHERE k.TASK_CODE = 'land' "
            "AND s.TASK_ID = (SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = 'summary') "
            "AND s.PIPELINE_RUN_ID = :r AND l.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).one()
    assert message == "skipped because land failed"
    assert "x" in error
    assert "land" in log_tail
