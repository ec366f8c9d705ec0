"""The paused-publisher cases on Iceberg targets: a worker stops past its lease (SIGSTOP), its
attempt is recorded LOST and retried on another host, then it resumes and tries to publish.

The Iceberg catalog is a PostgreSQL database (the writers of one target queue on its advisory
lock) and the table files a folder. In every case the target holds the task run's rows exactly
once, and the newest snapshot of the task run is the SUCCESS attempt's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.config.rules import WarehouseType
from etl_craft.config.sections import Warehouse
from etl_craft.warehouse import connect
from etl_craft.warehouse.iceberg.catalog import load
from etl_craft.warehouse.iceberg.connection import IcebergConnection
from etl_craft.warehouse.iceberg.publisher import ATTEMPT_ID, TASK_RUN_ID
from tests.chaos.harness import attempts
from tests.chaos.hosts import resume, waiting_on_lock
from tests.chaos.test_paused_publishers import (
    APPEND,
    APPENDED,
    BATCH,
    LAND,
    SETTLE_SECONDS,
    Scene,
    fenced_out,
    lost,
    paused_worker,
    python_pipeline,
    run_succeeded,
    succeeded,
    task_run_id,
    wait_ended,
)
from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

pytestmark = pytest.mark.postgres
assert LAND  # the script python_pipeline writes


def iceberg(url: str, location: Path) -> IcebergConnection:
    warehouse = Warehouse(
        type=WarehouseType.ICEBERG,
        url=url,
        path=None,
        ledger_schema="etl_craft",
        max_queries=None,
        options={"location": str(location)},
    )
    conn = connect(warehouse)
    assert isinstance(conn, IcebergConnection)
    return conn


@pytest.fixture
def scene(
    pg_project: ProjectOnDisk, processes: Processes, pg_admin_url: str, tmp_path: Path
) -> Iterator[Scene]:
    name = unique_name("etl_craft_iceberg_wh")
    url = create_database(pg_admin_url, name)
    location = tmp_path / "lakehouse"
    with iceberg(url, location) as conn:
        conn.execute("create the schema", "CREATE SCHEMA lnd")
        conn.execute(
            "create the events",
            "CREATE TABLE lnd.events (id INT, label TEXT, TASK_RUN_ID BIGINT, "
            "CREATE_DATE TIMESTAMPTZ)",
        )
        conn.execute(
            "create the batch",
            "CREATE TABLE lnd.batch (n INT, TASK_RUN_ID BIGINT, ATTEMPT_ID BIGINT)",
        )
    project = pg_project
    (project.root / "craft-connector.yml").write_text(
        "Engine:\n  url: ${TEST_ENGINE_URL}\n"
        "Warehouse:\n  type: iceberg\n  url: ${TEST_WAREHOUSE_URL}\n"
        f"  location: {location}\n"
    )
    with (project.root / ".env").open("a") as env:
        env.write(f"TEST_WAREHOUSE_URL={url}\n")
    environ = dict(line.split("=", 1) for line in (project.root / ".env").read_text().split())
    connector = load_connector(project.config, profile=None, environ=environ)
    try:
        yield Scene(ProjectOnDisk(project.root, connector, project.engine), processes, url)
    finally:
        processes.stop_all()
        drop_database(pg_admin_url, name)


def table_rows(scene: Scene, sql: str) -> list[tuple[Any, ...]]:
    location = scene.project.connector.warehouse.options["location"]
    with iceberg(scene.warehouse, Path(location)) as conn:
        return [tuple(row) for row in conn.fetch_all("read back", sql)]


def last_attempt_of(scene: Scene, table: str, task_run: int) -> int:
    """The attempt id of the task run's newest snapshot of the table."""
    location = scene.project.connector.warehouse.options["location"]
    conn = iceberg(scene.warehouse, Path(location))
    try:
        found = load(conn.catalog, "lnd", table)
    finally:
        conn.close()
    assert found is not None
    for snapshot in sorted(found.snapshots(), key=lambda s: -(s.sequence_number or 0)):
        summary = snapshot.summary
        if summary is not None and summary.get(TASK_RUN_ID) == str(task_run):
            return int(str(summary[ATTEMPT_ID]))
    raise AssertionError(f"no snapshot of lnd.{table} carries task run {task_run}")


def assert_sql_exactly_once(scene: Scene) -> None:
    winner, claimed, ended = succeeded(scene.project)
    task_run = task_run_id(scene.project)
    found = table_rows(
        scene,
        f"SELECT id, label, CREATE_DATE FROM lnd.events WHERE TASK_RUN_ID = {task_run} ORDER BY id",
    )
    assert [(id_, label) for id_, label, _ in found] == APPENDED
    assert all(claimed <= stamp <= ended for _, _, stamp in found), (found, claimed, ended)
    assert table_rows(scene, "SELECT count(*) FROM lnd.events") == [(3,)]
    assert last_attempt_of(scene, "events", task_run) == winner


def test_an_iceberg_sql_task_paused_before_its_lock_resumes_after_the_retry_and_is_refused(
    scene: Scene,
) -> None:
    scene.project.migrate("0001_loads.sql", APPEND)
    worker, child, paused = paused_worker(scene, "loads", "sql_before_target_lock:stop")
    wait_for(lambda: run_succeeded(scene.project), "the retry to succeed", SETTLE_SECONDS)
    assert lost(scene.project, paused["attempt_id"])
    resume(child)
    wait_ended(child)
    resume(worker.pid)
    assert_sql_exactly_once(scene)
    assert fenced_out(paused)


def test_an_iceberg_sql_task_paused_holding_its_lock_makes_the_retry_wait_and_loses(
    scene: Scene,
) -> None:
    scene.project.migrate("0001_loads.sql", APPEND)
    worker, child, paused = paused_worker(scene, "loads", "sql_after_target_lock:stop")
    wait_for(lambda: lost(scene.project, paused["attempt_id"]), "LOST", SETTLE_SECONDS)
    wait_for(
        lambda: waiting_on_lock(scene.warehouse),
        "the retry to wait behind the paused one",
        SETTLE_SECONDS,
    )
    resume(child)
    wait_ended(child)
    resume(worker.pid)
    wait_for(lambda: run_succeeded(scene.project), "the retry to succeed", SETTLE_SECONDS)
    assert_sql_exactly_once(scene)
    assert not fenced_out(paused)  # it held the lock first: committed, then replaced


def test_an_iceberg_sql_task_that_committed_during_the_pause_is_recovered_from_its_snapshot(
    scene: Scene,
) -> None:
    scene.project.migrate("0001_loads.sql", APPEND)
    worker, child, _ = paused_worker(scene, "loads", "child_before_report:stop")
    wait_for(
        lambda: run_succeeded(scene.project),
        "the overseer to recover it from the snapshot summary",
        SETTLE_SECONDS,
    )
    resume(child)
    wait_ended(child)
    resume(worker.pid)
    assert attempts(scene.project, "append") == [(1, "SUCCESS", "LEDGER")]
    assert_sql_exactly_once(scene)


@pytest.mark.parametrize("pause_at", ["before_fence", "inside_fence"])
def test_a_paused_ingestion_script_on_iceberg_and_its_retry_land_the_batch_once(
    scene: Scene, tmp_path: Path, pause_at: str
) -> None:
    python_pipeline(scene, pause_at, tmp_path)
    worker, child, paused = paused_worker(scene, "ingest", None)
    wait_for(lambda: lost(scene.project, paused["attempt_id"]), "LOST", SETTLE_SECONDS)
    # A script's writes take no target lock: the retry publishes first either way, and the
    # paused attempt's snapshot is refused when it resumes.
    wait_for(lambda: run_succeeded(scene.project), "the retry to succeed", SETTLE_SECONDS)
    resume(child)
    wait_ended(child)
    resume(worker.pid)
    winner, _, _ = succeeded(scene.project)
    found = table_rows(
        scene, "SELECT ATTEMPT_ID, count(*), count(DISTINCT n) FROM lnd.batch GROUP BY 1"
    )
    assert found == [(winner, BATCH, BATCH)]
    assert fenced_out(paused)
