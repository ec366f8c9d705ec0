"""A paused publisher on the emulated Snowflake: its retry lands the rows once, and its own late
commit is refused by the fence.

Real processes on a PostgreSQL Engine DB; the warehouse is the session's fakesnow server, which
the task processes reach through snowflake-connector-python as they would an account. On
Snowflake an action claims the fence in the transaction of its writes, just before its ledger
row (see etl_craft.warehouse.snowflake): an attempt paused after it began its transaction and
resumed after its retry published writes in its own transaction, then finds the later attempt
on the fence row and rolls everything back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from etl_craft.config.connector import load_connector
from tests.chaos.hosts import resume
from tests.chaos.test_paused_publishers import (
    APPENDED,
    SETTLE_SECONDS,
    Scene,
    fenced_out,
    lost,
    paused_worker,
    run_succeeded,
    sql_pipeline,
    succeeded,
    task_run_id,
    wait_ended,
)
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.snowflake import Emulator
from tests.fixtures.waiting import wait_for

pytestmark = pytest.mark.postgres


def with_snowflake_warehouse(
    project: ProjectOnDisk, emulator: Emulator, database: str
) -> ProjectOnDisk:
    """The project, its warehouse moved to a database of the emulated Snowflake."""
    (project.root / "craft-connector.yml").write_text(
        "Engine:\n  url: ${TEST_ENGINE_URL}\n" + emulator.profile(database)
    )
    with (project.root / ".env").open("a") as env:
        env.write("TEST_SNOWFLAKE_PASSWORD=emulated\n")
    environ = dict(line.split("=", 1) for line in (project.root / ".env").read_text().split())
    connector = load_connector(project.config, profile=None, environ=environ)
    return ProjectOnDisk(project.root, connector, project.engine)


@pytest.fixture
def scene(
    pg_project: ProjectOnDisk, processes: Processes, snowflake_emulator: Emulator
) -> Iterator[Scene]:
    database = snowflake_emulator.new_database()
    with snowflake_emulator.connect(database) as conn:
        conn.execute("create the landing schema", "CREATE SCHEMA lnd")
        conn.execute(
            "create the landing table",
            "CREATE TABLE lnd.events (id INT, label VARCHAR, TASK_RUN_ID BIGINT, "
            "CREATE_DATE TIMESTAMP_TZ)",
        )
    try:
        project = with_snowflake_warehouse(pg_project, snowflake_emulator, database)
        yield Scene(project, processes, database)
    finally:
        processes.stop_all()


def warehouse_rows(emulator: Emulator, database: str, sql: str, *params: object) -> list[Any]:
    with emulator.connect(database) as conn:
        return conn.fetch_all("read back", sql, list(params))


def test_a_sql_task_paused_in_its_transaction_is_refused_after_its_retry_published(
    scene: Scene, snowflake_emulator: Emulator
) -> None:
    sql_pipeline(scene)
    worker, child, paused = paused_worker(scene, "loads", "sql_after_target_lock:stop")
    wait_for(
        lambda: lost(scene.project, paused["attempt_id"]),
        "the paused attempt to be LOST",
        SETTLE_SECONDS,
    )
    wait_for(lambda: run_succeeded(scene.project), "the retry to succeed", SETTLE_SECONDS)

    resume(child)
    # Its owner stays paused until it ends: awake, the owner would stop at once an attempt no
    # longer its own, and the fence would not be what kept it from publishing.
    wait_ended(child)
    resume(worker.pid)

    winner, claimed, ended = succeeded(scene.project)
    assert winner != paused["attempt_id"]
    run_id = task_run_id(scene.project)
    found = warehouse_rows(
        snowflake_emulator,
        scene.warehouse,
        "SELECT id, label, CREATE_DATE FROM lnd.events WHERE TASK_RUN_ID = ? ORDER BY id",
        run_id,
    )
    assert [(id_, label) for id_, label, _ in found] == APPENDED
    # The rows carry the SUCCESS attempt's instant, taken while it ran.
    assert all(claimed <= stamp <= ended for _, _, stamp in found), (found, claimed, ended)
    everything = warehouse_rows(
        snowflake_emulator, scene.warehouse, "SELECT COUNT(*) FROM lnd.events"
    )
    assert everything == [(3,)]
    fence = warehouse_rows(
        snowflake_emulator,
        scene.warehouse,
        "SELECT attempt_id FROM etl_craft.task_run_fence WHERE task_run_id = ?",
        run_id,
    )
    assert fence == [(winner,)]
    ledger = warehouse_rows(
        snowflake_emulator,
        scene.warehouse,
        "SELECT attempt_id FROM etl_craft.attempt_ledger WHERE task_run_id = ?",
        run_id,
    )
    assert ledger == [(winner,)]
    assert fenced_out(paused)  # its late commit was refused by the fence
