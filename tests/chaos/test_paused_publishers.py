"""Paused and cut-off publishers: a worker stops past its lease (SIGSTOP), its attempt is
recorded LOST and retried on another host, then it resumes and tries to publish.

Real processes on a PostgreSQL Engine DB and a PostgreSQL warehouse; each worker runs under a
hostname of its own, so the overseer treats it as another host. In every case the target holds
the task run's rows exactly once, written by the attempt the Engine DB records SUCCESS, and the
stored offset is that attempt's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.harness import attempts, rows, scalar
from tests.chaos.hosts import (
    EngineProxy,
    gone,
    pause,
    resume,
    start_server,
    start_worker,
    stopped,
    wait_leading,
    waiting_on_lock,
    warehouse_execute,
    warehouse_rows,
    with_pg_warehouse,
)
from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

pytestmark = pytest.mark.postgres
APPENDED = [(1, "a"), (2, "b"), (3, "c")]
BATCH = 10
REFUSED = "is refused its warehouse commit"
# Leases are 3 s, settled on another host 6 s later; a loaded machine stretches each step.
SETTLE_SECONDS = 300.0

APPEND = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'loads' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'append', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'loads';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, x.N, x.V FROM CFG_TASKS, (
  SELECT 'ACTION' AS N, 'APPEND_TABLE' AS V
  UNION ALL SELECT 'TARGET_OBJECT', 'lnd.events'
  UNION ALL SELECT 'SOURCE_SQL', 'SELECT * FROM (VALUES (1, ''a''), (2, ''b''), (3, ''c'')) v(id, label)'
  UNION ALL SELECT 'RETRIES', '3'
  UNION ALL SELECT 'RETRY_DELAY_SECONDS', '0') x
 WHERE TASK_CODE = 'append';
"""

# The first attempt to get here pauses itself (SIGSTOP) where the test asks, once.
LAND = """
import os
import signal
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    first = Path(context.input_params["first"])
    pause = None if first.exists() else context.input_params["pause"]
    first.touch()
    if pause == "before_fence":
        os.kill(os.getpid(), signal.SIGSTOP)
    with context.fenced_transaction() as warehouse:
        mark = warehouse.dialect.placeholder
        warehouse.execute(
            "forget this task run's rows",
            f"DELETE FROM lnd.batch WHERE TASK_RUN_ID = {mark}",
            [context.task_run_id],
        )
        for n in range(10):
            warehouse.execute(
                "land a row",
                f"INSERT INTO lnd.batch (n, TASK_RUN_ID, ATTEMPT_ID) VALUES ({mark}, {mark}, {mark})",
                [n, context.task_run_id, context.attempt_id],
            )
        if pause == "inside_fence":
            os.kill(os.getpid(), signal.SIGSTOP)
    return ScriptResult(row_count=10, offset=f"attempt-{context.attempt_id}")
"""


@dataclass
class Scene:
    project: ProjectOnDisk
    processes: Processes
    warehouse: str


@pytest.fixture
def scene(pg_project: ProjectOnDisk, processes: Processes, pg_admin_url: str) -> Iterator[Scene]:
    name = unique_name("etl_craft_fence_wh")
    url = create_database(pg_admin_url, name)
    warehouse_execute(
        url,
        "CREATE SCHEMA lnd;"
        "CREATE TABLE lnd.events (id INT, label TEXT, TASK_RUN_ID BIGINT, CREATE_DATE TIMESTAMPTZ);"
        "CREATE TABLE lnd.batch (n INT, TASK_RUN_ID BIGINT, ATTEMPT_ID BIGINT);",
    )
    try:
        yield Scene(with_pg_warehouse(pg_project, url), processes, url)
    finally:
        processes.stop_all()
        drop_database(pg_admin_url, name)


def sql_pipeline(scene: Scene) -> None:
    scene.project.migrate("0001_loads.sql", APPEND)


def python_pipeline(scene: Scene, pause: str, tmp: Path) -> None:
    (scene.project.root / "ingestion_scripts" / "land.py").write_text(LAND)
    params = json.dumps({"first": str(tmp / "first"), "pause": pause}).replace("'", "''")
    scene.project.migrate(
        "0001_ingest.sql",
        f"""
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
        SELECT PROJECT_ID, 'ingest' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'pull', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'ingest';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT TASK_ID, x.N, x.V FROM CFG_TASKS, (
          SELECT 'SCRIPT' AS N, 'land.py' AS V
          UNION ALL SELECT 'INPUT_PARAMS', '{params}'
          UNION ALL SELECT 'OFFSET_TYPE', 'TEXT'
          UNION ALL SELECT 'RETRIES', '3'
          UNION ALL SELECT 'RETRY_DELAY_SECONDS', '0') x
         WHERE TASK_CODE = 'pull';
        """,
    )


def stopped_task_process(project: ProjectOnDisk) -> int:
    """The pid of the one task process that paused itself at its fault point."""

    def paused() -> int | None:
        pids = rows(project, "SELECT PID FROM AUD_TASK_ATTEMPTS WHERE PID IS NOT NULL")
        found = [int(pid) for (pid,) in pids if stopped(int(pid))]
        return found[0] if len(found) == 1 else None

    return wait_for(paused, "a task process to pause at its fault point", SETTLE_SECONDS)


def attempt_of(project: ProjectOnDisk, pid: int) -> dict[str, Any]:
    [row] = rows(
        project,
        "SELECT ATTEMPT_ID, STATUS, LOG_PATH FROM AUD_TASK_ATTEMPTS WHERE PID = :p",
        p=pid,
    )
    return {"attempt_id": row[0], "status": row[1], "log_path": row[2]}


def succeeded(project: ProjectOnDisk) -> tuple[int, datetime, datetime]:
    """The one SUCCESS attempt: its id, when it was claimed and when it ended."""
    [row] = rows(
        project,
        "SELECT ATTEMPT_ID, CLAIMED_AT, ENDED_AT FROM AUD_TASK_ATTEMPTS WHERE STATUS = 'SUCCESS'",
    )
    return int(row[0]), row[1], row[2]


def run_succeeded(project: ProjectOnDisk) -> bool:
    statuses = [s for (s,) in rows(project, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG")]
    assert "FAILED" not in statuses, statuses
    return statuses == ["SUCCESS"]


def task_run_id(project: ProjectOnDisk) -> int:
    return int(scalar(project, "SELECT TASK_RUN_ID FROM AUD_TASK_RUN_LOG"))


def wait_ended(pid: int) -> None:
    """The resumed task process ran to its end (its outcome the Engine DB then refuses)."""
    wait_for(lambda: gone(pid), f"the resumed task process {pid} to end", SETTLE_SECONDS)


def fenced_out(paused: dict[str, Any]) -> bool:
    """The resumed attempt's log tells it was refused by the fence."""
    return REFUSED in Path(paused["log_path"]).read_text(errors="replace")


def assert_sql_exactly_once(scene: Scene) -> None:
    project = scene.project
    winner, claimed, ended = succeeded(project)
    found = warehouse_rows(
        scene.warehouse,
        "SELECT id, label, CREATE_DATE FROM lnd.events WHERE TASK_RUN_ID = %s ORDER BY id",
        task_run_id(project),
    )
    assert [(id_, label) for id_, label, _ in found] == APPENDED
    # Each attempt stamps its rows with one instant taken while it runs.
    assert all(claimed <= stamp <= ended for _, _, stamp in found), (found, claimed, ended)
    assert warehouse_rows(scene.warehouse, "SELECT count(*) FROM lnd.events") == [(3,)]
    ledger = warehouse_rows(
        scene.warehouse,
        "SELECT attempt_id FROM etl_craft.task_run_fence WHERE task_run_id = %s",
        task_run_id(project),
    )
    assert ledger == [(winner,)]


def assert_python_exactly_once(scene: Scene) -> None:
    project = scene.project
    winner, _, _ = succeeded(project)
    found = warehouse_rows(
        scene.warehouse, "SELECT ATTEMPT_ID, count(*), count(DISTINCT n) FROM lnd.batch GROUP BY 1"
    )
    assert found == [(winner, BATCH, BATCH)]
    offsets = rows(project, "SELECT OFFSET_VALUE, ATTEMPT_ID FROM AUD_TASK_OFFSETS")
    assert offsets == [(f"attempt-{winner}", winner)]


def paused_worker(
    scene: Scene, pipeline: str, fault: str | None
) -> tuple[Any, int, dict[str, Any]]:
    """A worker whose task process paused at ``fault``, then the worker itself paused.

    The spare worker starts once the paused one has claimed the attempt, so it can only claim
    the retry; its start overlaps the wait for the lease to expire.
    """
    start_server(scene.processes, scene.project)
    worker = start_worker(scene.processes, scene.project, "paused-host", fault=fault)
    wait_leading(scene.project)
    scene.project.queued_run(pipeline)
    wait_for(lambda: claimed_on(scene.project, "paused-host"), "the claim", SETTLE_SECONDS)
    start_worker(scene.processes, scene.project, "spare-host", wait=False)
    child = stopped_task_process(scene.project)
    pause(worker.pid)
    return worker, child, attempt_of(scene.project, child)


def claimed_on(project: ProjectOnDisk, host: str) -> bool:
    found = scalar(
        project, "SELECT count(*) FROM AUD_TASK_ATTEMPTS WHERE OWNER_ID LIKE :h", h=f"{host}:%"
    )
    return int(found) > 0


def lost(project: ProjectOnDisk, attempt_id: int) -> bool:
    status = scalar(
        project, "SELECT STATUS FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a", a=attempt_id
    )
    return bool(status == "LOST")


def test_a_sql_task_paused_before_its_target_lock_resumes_after_the_retry_and_is_refused(
    scene: Scene,
) -> None:
    sql_pipeline(scene)
    worker, child, paused = paused_worker(scene, "loads", "sql_before_target_lock:stop")
    wait_for(
        lambda: run_succeeded(scene.project),
        "the retry on the spare host to succeed",
        SETTLE_SECONDS,
    )
    assert lost(scene.project, paused["attempt_id"])

    resume(child)
    # Its owner stays paused until it ends: awake, the owner would stop at once an attempt no
    # longer its own, and the fence would not be what kept it from publishing.
    wait_ended(child)
    resume(worker.pid)
    assert_sql_exactly_once(scene)
    assert fenced_out(paused)


def test_a_sql_task_paused_holding_its_target_lock_makes_the_retry_wait_and_loses(
    scene: Scene,
) -> None:
    sql_pipeline(scene)
    worker, child, paused = paused_worker(scene, "loads", "sql_after_target_lock:stop")
    wait_for(
        lambda: lost(scene.project, paused["attempt_id"]),
        "the paused attempt to be LOST",
        SETTLE_SECONDS,
    )
    wait_for(
        lambda: waiting_on_lock(scene.warehouse),
        "the retry to wait behind the paused one",
        SETTLE_SECONDS,
    )

    resume(child)
    # Its owner stays paused until it ends: awake, the owner would stop at once an attempt no
    # longer its own, and the fence would not be what kept it from publishing.
    wait_ended(child)
    resume(worker.pid)
    wait_for(lambda: run_succeeded(scene.project), "the retry to succeed", SETTLE_SECONDS)
    assert_sql_exactly_once(scene)
    assert not fenced_out(paused)  # it held the fence first: committed, then replaced


def test_a_short_sql_task_that_committed_during_the_pause_is_recovered_without_a_retry(
    scene: Scene,
) -> None:
    sql_pipeline(scene)
    worker, child, _ = paused_worker(scene, "loads", "child_before_report:stop")
    wait_for(
        lambda: run_succeeded(scene.project),
        "the overseer to recover it from the ledger",
        SETTLE_SECONDS,
    )
    resume(child)
    wait_ended(child)  # its owner still paused, as in the cases above
    resume(worker.pid)
    assert attempts(scene.project, "append") == [(1, "SUCCESS", "LEDGER")]
    assert_sql_exactly_once(scene)


@pytest.mark.parametrize("pause_at", ["before_fence", "inside_fence"])
def test_a_paused_ingestion_script_and_its_retry_land_the_batch_once(
    scene: Scene, tmp_path: Path, pause_at: str
) -> None:
    python_pipeline(scene, pause_at, tmp_path)
    worker, child, paused = paused_worker(scene, "ingest", None)
    wait_for(
        lambda: lost(scene.project, paused["attempt_id"]),
        "the paused attempt to be LOST",
        SETTLE_SECONDS,
    )
    if pause_at == "before_fence":
        wait_for(lambda: run_succeeded(scene.project), "the retry to succeed", SETTLE_SECONDS)
    else:
        wait_for(
            lambda: waiting_on_lock(scene.warehouse),
            "the retry to wait on the fence",
            SETTLE_SECONDS,
        )

    resume(child)
    # Its owner stays paused until it ends: awake, the owner would stop at once an attempt no
    # longer its own, and the fence would not be what kept it from publishing.
    wait_ended(child)
    resume(worker.pid)
    wait_for(lambda: run_succeeded(scene.project), "the retry to succeed", SETTLE_SECONDS)
    assert_python_exactly_once(scene)
    # Paused inside the fence, it held the row first: it committed, and the retry replaced it.
    assert fenced_out(paused) is (pause_at == "before_fence")


def test_a_worker_cut_off_from_the_engine_db_past_its_lease_publishes_nothing_twice(
    scene: Scene, tmp_path: Path
) -> None:
    python_pipeline(scene, "before_fence", tmp_path)
    start_server(scene.processes, scene.project)
    engine_url = scene.project.connector.engine_url
    host_port = engine_url.split("@", 1)[1].split("/", 1)[0]
    host, port = host_port.rsplit(":", 1)
    proxy = EngineProxy((host, int(port)))
    try:
        start_worker(
            scene.processes, scene.project, "cut-off-host", engine_url=proxy.url(engine_url)
        )
        wait_leading(scene.project)
        scene.project.queued_run("ingest")
        wait_for(lambda: claimed_on(scene.project, "cut-off-host"), "the claim", SETTLE_SECONDS)
        start_worker(scene.processes, scene.project, "spare-host", wait=False)
        child = stopped_task_process(scene.project)
        paused = attempt_of(scene.project, child)
        proxy.cut()
        wait_for(
            lambda: lost(scene.project, paused["attempt_id"]),
            "the cut-off attempt LOST",
            SETTLE_SECONDS,
        )
        wait_for(
            lambda: run_succeeded(scene.project),
            "the retry on the spare host to succeed",
            SETTLE_SECONDS,
        )
        # Its script paused before its write only to make the order certain: it writes late,
        # the warehouse still reachable, unless its owner has stopped it meanwhile.
        resume(child)
        wait_for(lambda: gone(child), "the cut-off task process to end", SETTLE_SECONDS)
        proxy.restore()
    finally:
        proxy.close()
    assert_python_exactly_once(scene)
