"""Spark's publication by catalog swap: retry-safe appends, failed attempts that leave nothing,
and the attempt recorded on the table it published."""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest

from etl_craft.core.errors import WarehouseError
from etl_craft.handlers.sql import Action, run_sql_action
from etl_craft.warehouse.ledger import applied
from etl_craft.warehouse.spark import DEFAULT_SCRATCH_SCHEMA, SparkConnection, connect_spark
from tests.fixtures.databases import unique_name
from tests.integration.warehouse.helpers import rows, run, spec

pytestmark = pytest.mark.spark

SOURCE = "SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, 'c')) v(n, label)"
FAULTY = "SELECT n, CAST(CASE WHEN n = 3 THEN 'x' ELSE '1' END AS INT) AS label FROM (VALUES (1), (2), (3)) v(n)"


@pytest.fixture
def spark(spark_remote: str) -> Iterator[SparkConnection]:
    driver = importlib.import_module("pyspark.sql.connect.session")
    conn = connect_spark(driver, spark_remote, None, None)
    conn.execute("start from an empty ledger", "DROP SCHEMA IF EXISTS etl_craft CASCADE")
    yield conn
    conn.close()


@pytest.fixture
def target(spark: SparkConnection) -> str:
    schema = unique_name("s")
    spark.execute("create the schema", f"CREATE SCHEMA {schema}")
    run(spark, Action.SETUP_TABLE, f"{schema}.t", SOURCE)
    return f"{schema}.t"


def candidates(spark: SparkConnection, target: str) -> list[str]:
    table = target.split(".")[1]
    found = spark.fetch_all("list scratch tables", f"SHOW TABLES IN {DEFAULT_SCRATCH_SCHEMA}")
    return [str(row[1]) for row in found if str(row[1]).startswith(f"{table}__")]


def test_a_retried_append_replaces_its_task_run_s_rows(spark: SparkConnection, target: str) -> None:
    first = run(spark, Action.APPEND_TABLE, target, SOURCE, task_run_id=77)
    retry = run(spark, Action.APPEND_TABLE, target, SOURCE, task_run_id=77)
    other = run(spark, Action.APPEND_TABLE, target, SOURCE, task_run_id=78)
    assert (first.deleted, retry.deleted, other.deleted) == (0, 3, 0)
    assert rows(spark, target, "n, label, TASK_RUN_ID") == sorted(
        [(n, label, run_id) for n, label in ((1, "a"), (2, "b"), (3, "c")) for run_id in (77, 78)],
        key=repr,
    )
    assert rows(spark, target, "COUNT(DISTINCT ROW_ID)") == [(6,)]


def test_a_failed_attempt_leaves_the_target_the_ledger_and_no_candidate(
    spark: SparkConnection, target: str
) -> None:
    run(spark, Action.APPEND_TABLE, target, SOURCE, task_run_id=90)
    before = rows(spark, target, "*")
    request = spec(Action.OVERWRITE_TABLE, target, FAULTY, task_run_id=91)
    with pytest.raises(WarehouseError, match="(?i)cast|invalid"):
        run_sql_action(spark, request)
    assert rows(spark, target, "*") == before
    assert applied(spark, request.attempt_id) is None
    assert candidates(spark, target) == []


def test_the_published_table_names_the_attempt_that_published_it(
    spark: SparkConnection, target: str
) -> None:
    request = spec(Action.OVERWRITE_TABLE, target, SOURCE, task_run_id=95)
    run_sql_action(spark, request)
    found = spark.fetch_all("read the properties", f"SHOW TBLPROPERTIES {target}")
    recorded = {str(key): str(value) for key, value in found}
    assert recorded["etl_craft.attempt_id"] == str(request.attempt_id)
    assert recorded["etl_craft.task_run_id"] == "95"
    assert candidates(spark, target) == []
    # The candidate's files are the table's now: a new session reads them.
    assert rows(spark, target, "n, label") == [(1, "a"), (2, "b"), (3, "c")]
