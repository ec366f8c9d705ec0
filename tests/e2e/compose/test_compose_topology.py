"""The compose deployment, run as local processes from docker-compose.yml's own definitions.

The overseer, a worker per pool and the API start as the compose file says (topology.py maps
what Docker would provide); runs are triggered and followed through the API with a token, as
deploy/compose/README.md tells an operator to. Timings are shortened only through the
variables the compose file reads (lease, heartbeat, poll), as an operator may set them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.e2e.compose.example_project import (
    ENGINE,
    TASK_POOLS,
    WAREHOUSE,
    WAREHOUSE_QUERIES,
    Api,
    expected_rows,
)
from tests.e2e.compose.topology import LocalTopology, Replica, local_topology
from tests.fixtures.waiting import wait_for

pytestmark = pytest.mark.postgres

VARIABLES = {
    "ETL_CRAFT_LEASE_SECONDS": "4",
    "ETL_CRAFT_HEARTBEAT_SECONDS": "1",
    "ETL_CRAFT_POLL_SECONDS": "0.2",
    "ETL_CRAFT_LOG_FORMAT": "text",
}


def api_of(topology: LocalTopology, replica: Replica) -> Api:
    """The API replica's address, and an operator token made inside its container."""
    command = "etl-craft token create --name compose_e2e --role operator --format json"
    created = topology.exec("api", *command.split())
    return Api(f"http://127.0.0.1:{replica.ports['8730']}", json.loads(created)["token"])


def query(topology: LocalTopology, database: str, sql: str, **params: Any) -> list[Any]:
    with psycopg.connect(topology.databases.url(database)) as conn:
        return [tuple(row) for row in conn.execute(sql, params or None).fetchall()]


def attempts(topology: LocalTopology, run_id: int) -> list[tuple[str, int, str, str, str, int]]:
    """(task, attempt number, status, pool, outcome source, worker pid) of a run's attempts."""
    return query(
        topology,
        ENGINE,
        "SELECT k.TASK_CODE, a.ATTEMPT_NUMBER, a.STATUS, a.POOL, a.OUTCOME_SOURCE, w.PID "
        "FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "LEFT JOIN AUD_WORKERS w ON w.WORKER_ID = a.OWNER_ID "
        "WHERE t.PIPELINE_RUN_ID = %(run)s ORDER BY a.ATTEMPT_ID",
        run=run_id,
    )


def warehouse_rows(topology: LocalTopology) -> dict[str, list[Any]]:
    return {table: query(topology, WAREHOUSE, sql) for table, sql in WAREHOUSE_QUERIES.items()}


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("images")


@pytest.fixture
def topology(pg_admin_url: str, tmp_path: Path, images: Path) -> Iterator[LocalTopology]:
    with local_topology(pg_admin_url, tmp_path, images, VARIABLES) as topology:
        yield topology


def test_runs_go_through_the_overseer_and_the_worker_of_each_pool(
    topology: LocalTopology,
) -> None:
    started = topology.up()
    api = api_of(topology, started["api"][0])
    pids = {name: started[name][0].process.pid for name in ("worker-ingestion", "worker-warehouse")}

    first = api.trigger("orders", "compose-1")
    assert api.follow(first) == "SUCCESS"
    second = api.trigger("orders", "compose-2")
    assert api.follow(second) == "SUCCESS"

    # Each task ran once, in its pool, on that pool's worker.
    for run_id in (first, second):
        assert attempts(topology, run_id) == [
            (task, 1, "SUCCESS", pool, "CHILD", pids[f"worker-{pool}"])
            for task, pool in TASK_POOLS.items()
        ]
    # The second run landed only the orders after the first run's offset.
    assert warehouse_rows(topology) == expected_rows(runs=2)
    runs = query(topology, ENGINE, "SELECT STATUS, COUNT(*) FROM AUD_PIPELINES_RUN_LOG GROUP BY 1")
    assert runs == [("SUCCESS", 2)]


def test_a_worker_killed_mid_run_leaves_the_run_finishing_on_its_other_replica(
    topology: LocalTopology,
) -> None:
    # Two replicas of the ingestion worker, as docker compose up --scale worker-ingestion=2.
    started = topology.up(scale={"worker-ingestion": 2})
    api = api_of(topology, started["api"][0])
    assert api.follow(api.trigger("orders", "compose-1")) == "SUCCESS"

    # The test locks lnd.orders, so the second run's landing is mid-statement when its worker
    # is killed with every process it started, as a container dies; then the lock goes.
    with psycopg.connect(topology.databases.url(WAREHOUSE)) as holder:
        holder.execute("LOCK TABLE lnd.orders IN ACCESS EXCLUSIVE MODE")
        run_id = api.trigger("orders", "compose-2")
        wait_for(lambda: _landing_waits_on_the_lock(topology), "land_orders to wait on lnd.orders")
        [(_, _, at_kill, _, _, pid)] = attempts(topology, run_id)
        victim = next(r for r in started["worker-ingestion"] if r.process.pid == pid)
        topology.kill(victim)
        holder.rollback()

    assert api.follow(run_id) == "SUCCESS"
    survivor = next(r for r in started["worker-ingestion"] if r is not victim)
    landing = [row for row in attempts(topology, run_id) if row[0] == "land_orders"]
    assert [(number, status, source, pid) for _, number, status, _, source, pid in landing] == [
        (1, "LOST", "RECONCILER", victim.process.pid),
        (2, "SUCCESS", "CHILD", survivor.process.pid),
    ]
    assert at_kill == "RUNNING"
    # Each order once: the lost attempt's rows never committed and the retry landed them.
    assert warehouse_rows(topology) == expected_rows(runs=2)


def _landing_waits_on_the_lock(topology: LocalTopology) -> bool:
    waiting = query(
        topology,
        WAREHOUSE,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock' AND query LIKE '%lnd.orders%'",
    )
    return bool(waiting[0][0])
