"""The Engine DB restarted mid-run with several attempts running (played at a proxy that drops
every connection and refuses new ones for 3 s or 30 s): no service exits, no healthy attempt is
stopped, each ends as its task process reported (outcomes handed over during the outage are
recorded after it), and the run ends SUCCESS. Also: an owner on the local pool that cannot
renew its leases stops the attempt before its lease runs out."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.chaos.harness import Processes, rows, scalar, wait_for
from tests.chaos.proxy import EngineProxy, cut_off
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.api.test_live_docs import free_port, wait_until_up
from tests.integration.worker.queueing import python_pipeline, release, start_worker, starts
from tests.integration.worker.test_worker_ownership import alive

pytestmark = [pytest.mark.chaos, pytest.mark.postgres]
TASKS = ["a", "b", "c", "d"]
# Leases that outlast the longest outage: the owners keep them through it.
RIDING = {"lease_seconds": "60", "heartbeat_seconds": "1"}


def run_status(project: ProjectOnDisk, run_id: int) -> str:
    return str(
        scalar(
            project, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r", r=run_id
        )
    )


def task_attempts(project: ProjectOnDisk, run_id: int) -> list[tuple[Any, ...]]:
    return rows(
        project,
        "SELECT k.TASK_CODE, a.ATTEMPT_NUMBER, a.STATUS, a.OUTCOME_SOURCE, t.STATUS "
        "FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE t.PIPELINE_RUN_ID = :r ORDER BY 1, 2",
        r=run_id,
    )


def ride_out(
    project: ProjectOnDisk, proxy: EngineProxy, services: list[Any], seconds: float
) -> int:
    """Queue a run of TASKS, cut the Engine DB off for ``seconds`` once all four run (two of
    them end during the cut, two after it), and wait for the run to succeed; its id."""
    run_id = project.queued_run("ride")
    wait_for(lambda: len(starts(project)) == len(TASKS), "every task to start")
    tasks = dict(
        rows(
            project,
            "SELECT a.ATTEMPT_ID, k.TASK_CODE FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
            "ON t.TASK_RUN_ID = a.TASK_RUN_ID JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID",
        )
    )
    held = [pid for attempt, pid in starts(project) if tasks[attempt] in ("c", "d")]
    with cut_off(proxy):
        release(project, "a")
        release(project, "b")
        time.sleep(seconds)  # the outage itself; nothing is asserted from its length
        assert [service.poll() for service in services] == [None] * len(services)
        assert [alive(pid) for pid in held] == [True, True]  # nobody stopped them
    release(project)
    wait_for(lambda: run_status(project, run_id) == "SUCCESS", "the run to succeed", 120)
    assert [service.poll() for service in services] == [None] * len(services)
    return run_id


def assert_each_ran_once(project: ProjectOnDisk, run_id: int) -> None:
    assert task_attempts(project, run_id) == [
        (task, 1, "SUCCESS", "CHILD", "SUCCESS") for task in TASKS
    ]
    assert len(starts(project)) == len(TASKS)


@pytest.mark.parametrize("seconds", [3, 30])
def test_the_server_and_its_workers_ride_out_an_engine_db_restart(
    seconds: float,
    proxied_project: ProjectOnDisk,
    engine_proxy: EngineProxy,
    processes: Processes,
) -> None:
    python_pipeline(proxied_project, "ride", TASKS)
    server = processes.start(proxied_project, "server", "--pool-provider", "queue", settings=RIDING)
    slots = ("--ingestion-slots", "2", "--warehouse-slots", "1")
    workers = [
        start_worker(processes, proxied_project, *slots, settings=RIDING)[0] for _ in range(2)
    ]
    run_id = ride_out(proxied_project, engine_proxy, [server, *workers], seconds)
    assert_each_ran_once(proxied_project, run_id)
    for service in [*workers, server]:
        service.terminate()
        assert processes.finish(service).code == 0


def test_the_server_with_its_local_pool_rides_out_an_engine_db_restart(
    proxied_project: ProjectOnDisk, engine_proxy: EngineProxy, processes: Processes
) -> None:
    python_pipeline(proxied_project, "ride", TASKS)
    server = processes.start(proxied_project, "server", settings=RIDING)
    run_id = ride_out(proxied_project, engine_proxy, [server], 3)
    assert_each_ran_once(proxied_project, run_id)
    server.terminate()
    assert processes.finish(server).code == 0


def test_the_local_pool_stops_an_attempt_before_a_lease_it_cannot_renew_runs_out(
    proxied_project: ProjectOnDisk, engine_proxy: EngineProxy, processes: Processes
) -> None:
    lease = 8
    python_pipeline(proxied_project, "ride", ["hold"])
    server = processes.start(proxied_project, "server", settings={"lease_seconds": str(lease)})
    proxied_project.queued_run("ride")
    wait_for(lambda: len(starts(proxied_project)) == 1, "the task to start")
    [(attempt_id, pid)] = starts(proxied_project)
    with cut_off(engine_proxy):
        wait_for(lambda: not alive(pid), "the server to fence its attempt", lease * 2)
        stopped_at = datetime.now(UTC)
        assert server.poll() is None

    def recorded() -> bool:
        found = rows(
            proxied_project,
            "SELECT STATUS FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a",
            a=attempt_id,
        )
        return found[0][0] not in ("CLAIMED", "RUNNING")

    wait_for(recorded, "the fenced attempt to be recorded")
    [(status, message, renewed)] = rows(
        proxied_project,
        "SELECT STATUS, ERROR_MESSAGE, HEARTBEAT_AT FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a",
        a=attempt_id,
    )
    assert status == "FAILED", message
    assert "could not renew the attempt's lease" in message
    assert stopped_at < renewed.astimezone(UTC) + timedelta(seconds=lease)
    assert server.poll() is None
    server.terminate()
    assert processes.finish(server).code == 0


def test_the_api_answers_through_an_engine_db_restart_and_a_silent_one(
    proxied_project: ProjectOnDisk, engine_proxy: EngineProxy, processes: Processes
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    api = processes.start(
        proxied_project,
        "api",
        "--port",
        str(port),
        settings={"engine_connect_timeout_seconds": "2"},
    )
    wait_until_up(url, api)
    assert ready(url) == 200
    with cut_off(engine_proxy):
        assert ready(url) == 503
    wait_for(lambda: ready(url) == 200, "the API to be ready again")
    # Connections accepted and never answered: the connect timeout answers instead of a hang.
    with cut_off(engine_proxy, silent=True):
        assert ready(url) == 503
    wait_for(lambda: ready(url) == 200, "the API to be ready again")
    assert api.poll() is None


def ready(url: str) -> int:
    try:
        with urllib.request.urlopen(f"{url}/readyz", timeout=15) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
