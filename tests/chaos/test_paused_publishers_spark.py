"""Paused publishers on a Spark warehouse (Publication.CATALOG_SWAP): a worker stops past its
lease, its attempt is retried on another host and publishes, then the paused one resumes.

Spark has no lock a retry could wait on: the paused attempt, resumed, computes its candidate
and is refused just before its catalog operation, because the retry's attempt is in the ledger
and recorded on the table. The target holds the SUCCESS attempt's rows once.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.warehouse.spark import SparkConnection, connect_spark
from tests.chaos.hosts import gone, resume
from tests.chaos.test_paused_publishers import (
    APPEND,
    APPENDED,
    SETTLE_SECONDS,
    Scene,
    lost,
    paused_worker,
    run_succeeded,
    succeeded,
    task_run_id,
)
from tests.fixtures.databases import unique_name
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.spark]
REFUSED = "is refused its warehouse commit"


def spark(remote: str) -> SparkConnection:
    return connect_spark(importlib.import_module("pyspark.sql.connect.session"), remote, None, None)


def with_spark_warehouse(project: ProjectOnDisk, remote: str, ledger: str) -> ProjectOnDisk:
    (project.root / "craft-connector.yml").write_text(
        "Engine:\n  url: ${TEST_ENGINE_URL}\n"
        f"Warehouse:\n  type: spark\n  remote: {remote}\n  ledger_schema: {ledger}\n"
    )
    environ = dict(line.split("=", 1) for line in (project.root / ".env").read_text().split())
    connector = load_connector(project.config, profile=None, environ=environ)
    return ProjectOnDisk(project.root, connector, project.engine)


@pytest.fixture
def spark_scene(
    pg_project: ProjectOnDisk, processes: Processes, spark_remote: str
) -> Iterator[tuple[Scene, str]]:
    # A schema and a ledger of its own: the Spark server is shared by the whole session.
    schema, ledger = unique_name("lnd"), unique_name("ledger")
    with spark(spark_remote) as conn:
        conn.execute("create the schema", f"CREATE SCHEMA {schema}")
        conn.execute(
            "create the target",
            f"CREATE TABLE {schema}.events "
            "(id INT, label STRING, TASK_RUN_ID BIGINT, CREATE_DATE TIMESTAMP)",
        )
    project = with_spark_warehouse(pg_project, spark_remote, ledger)
    project.migrate("0001_loads.sql", APPEND.replace("lnd.events", f"{schema}.events"))
    try:
        yield Scene(project, processes, spark_remote), schema
    finally:
        processes.stop_all()


def assert_exactly_once(scene: Scene, schema: str) -> None:
    winner, _, _ = succeeded(scene.project)
    with spark(scene.warehouse) as conn:
        found = conn.fetch_all(
            "read the target", f"SELECT id, label, TASK_RUN_ID FROM {schema}.events"
        )
        recorded = conn.fetch_all("read the properties", f"SHOW TBLPROPERTIES {schema}.events")
    assert sorted((i, label) for i, label, _ in found) == APPENDED
    assert {run for _, _, run in found} == {task_run_id(scene.project)}
    assert ("etl_craft.attempt_id", str(winner)) in recorded


def fenced_out(log_path: str) -> bool:
    return REFUSED in Path(log_path).read_text(errors="replace")


@pytest.mark.parametrize("fault", ["sql_before_target_lock:stop", "sql_after_target_lock:stop"])
def test_a_paused_spark_attempt_resuming_after_its_retry_published_is_refused(
    spark_scene: tuple[Scene, str], fault: str
) -> None:
    scene, schema = spark_scene
    worker, child, paused = paused_worker(scene, "loads", fault)
    wait_for(
        lambda: lost(scene.project, paused["attempt_id"]),
        "the paused attempt to be LOST",
        SETTLE_SECONDS,
    )
    # No lock to wait on: the retry publishes while the first attempt is still paused.
    wait_for(lambda: run_succeeded(scene.project), "the retry to succeed", SETTLE_SECONDS)
    resume(child)
    wait_for(lambda: gone(child), f"the resumed task process {child} to end", SETTLE_SECONDS)
    resume(worker.pid)
    assert_exactly_once(scene, schema)
    assert fenced_out(paused["log_path"])
