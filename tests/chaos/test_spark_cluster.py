"""A Spark cluster loses a worker mid-task: a standalone master, two workers and a Spark Connect
server in front of them, all real JVMs; a pipeline through `etl-craft server` and a worker.

The Spark worker is killed (kill -9, with its executor) while the task's SELECT runs. Spark
runs the lost partitions again on the worker left, the attempt publishes once, and the run
ends SUCCESS with every row exactly once.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chaos.harness import rows, scalar
from tests.chaos.hosts import start_server, start_worker, wait_leading
from tests.chaos.test_paused_publishers import SETTLE_SECONDS, run_succeeded
from tests.chaos.test_paused_publishers_spark import spark, with_spark_warehouse
from tests.fixtures.databases import unique_name
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.spark import connect_server, standalone_cluster
from tests.fixtures.waiting import wait_for

# Four JVMs start before the pipeline does: minutes on a loaded two-core machine.
pytestmark = [pytest.mark.postgres, pytest.mark.spark, pytest.mark.timeout(1200)]
ROWS = 2_000_000

LOAD = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'big' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'load', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'big';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, x.N, x.V FROM CFG_TASKS, (
  SELECT 'ACTION' AS N, 'CREATE_TABLE' AS V
  UNION ALL SELECT 'TARGET_OBJECT', '{target}'
  UNION ALL SELECT 'SOURCE_SQL',
    'SELECT id, md5(CAST(id AS STRING)) AS label FROM range(0, {rows}, 1, 8)') x
 WHERE TASK_CODE = 'load';
"""


@pytest.fixture
def cluster_remote(tmp_path: Path) -> Iterator[tuple[str, list[int]]]:
    with (
        standalone_cluster(tmp_path / "cluster", workers=2) as cluster,
        connect_server(tmp_path / "connect", master=cluster.master) as server,
    ):
        yield server.remote, [worker.pid for worker in cluster.workers]


def staging(project: ProjectOnDisk) -> bool:
    """The attempt has sent its SELECT's rows into the stage: Spark's executors are busy."""
    paths = rows(project, "SELECT LOG_PATH FROM AUD_TASK_ATTEMPTS WHERE LOG_PATH IS NOT NULL")
    for (path,) in paths:
        log = Path(path)
        if log.exists() and "prepare the stage" in log.read_text(errors="replace"):
            return True
    return False


def test_a_spark_worker_killed_mid_task_leaves_the_run_successful_with_its_rows_once(
    pg_project: ProjectOnDisk, processes: Processes, cluster_remote: tuple[str, list[int]]
) -> None:
    remote, workers = cluster_remote
    schema = unique_name("big")
    with spark(remote) as conn:
        conn.execute("create the schema", f"CREATE SCHEMA {schema}")
    project = with_spark_warehouse(pg_project, remote, unique_name("ledger"))
    project.migrate("0001_big.sql", LOAD.format(target=f"{schema}.t", rows=ROWS))
    start_server(processes, project)
    start_worker(processes, project, "etl-host")
    wait_leading(project)
    project.queued_run("big")
    wait_for(lambda: staging(project), "the task to stage its SELECT in Spark", SETTLE_SECONDS)

    # The worker and its executor: each Spark process was started in a session of its own.
    os.killpg(os.getpgid(workers[0]), signal.SIGKILL)

    wait_for(lambda: run_succeeded(project), "the run to succeed", SETTLE_SECONDS)
    assert int(scalar(project, "SELECT count(*) FROM AUD_TASK_ATTEMPTS")) == 1
    with spark(remote) as conn:
        counted = conn.fetch_all(
            "count the rows",
            f"SELECT COUNT(*), COUNT(DISTINCT id), COUNT(DISTINCT ROW_ID), MIN(id), MAX(id) "
            f"FROM {schema}.t",
        )
    assert counted == [(ROWS, ROWS, ROWS, 0, ROWS - 1)]
