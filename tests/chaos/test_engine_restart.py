"""The Engine DB restarted mid-run with several attempts running (played at a proxy that drops
every connection and refuses new ones for 3 s or 30 s): no service exits, no healthy attempt is
stopped, each ends as its task process reported (outcomes handed over during the outage are
recorded after it), and the run ends SUCCESS. Also: an owner on the local pool that cannot
renew its leases stops the attempt before its lease runs out.

One restart per length is shared by every service (a server with its workers, a server with
its local pool, the API, each on its own Engine DB behind the same proxy): the restart is what
costs time, and the services share nothing else. What each saw is recorded for its own test.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from tests.chaos.harness import rows, scalar
from tests.chaos.proxy import EngineProxy, cut_off
from tests.fixtures.databases import postgres_copy
from tests.fixtures.processes import Processes, free_port, scripted_project, wait_until_up
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.worker.queueing import python_pipeline, release, start_worker, starts
from tests.integration.worker.test_worker_ownership import alive

pytestmark = pytest.mark.postgres
TASKS = ["a", "b", "c", "d"]
# Leases that outlast the longest outage: the owners keep them through it.
RIDING = {"lease_seconds": "60", "heartbeat_seconds": "1"}
NO_METRICS = ("--metrics-port", "0")
SETTLE_SECONDS = 120.0


@dataclass
class Service:
    """A server's project and processes, and what was seen of them around the outage."""

    project: ProjectOnDisk
    processes: list[Any]
    run_id: int = 0
    held: list[int] = field(default_factory=list)  # pids of tasks still running after it
    alive_in_outage: list[bool] = field(default_factory=list)
    held_alive_in_outage: list[bool] = field(default_factory=list)
    final: str = ""  # the run's status once settled (or when the wait gave up)
    alive_after: list[bool] = field(default_factory=list)


@dataclass
class Restart:
    seconds: float
    processes: Processes
    workers: Service
    local: Service
    api: Any
    api_url: str
    ready_in_outage: int = 0
    ready_after: int = 0


@pytest.fixture(scope="module")
def proxy(pg_admin_url: str) -> Iterator[EngineProxy]:
    target = make_url(pg_admin_url)
    shared = EngineProxy((target.host or "127.0.0.1", target.port or 5432))
    yield shared
    shared.close()


@pytest.fixture(scope="module", params=[3, 30], ids=["3s", "30s"])
def restart(
    request: pytest.FixtureRequest,
    proxy: EngineProxy,
    pg_admin_url: str,
    pg_template: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Restart]:
    """Every service running a run of TASKS, the Engine DB cut off for ``seconds`` while two
    tasks end and two run on, then each run settled."""
    folder = tmp_path_factory.mktemp(f"restart-{request.param}s")
    processes = Processes(folder)
    with (
        postgres_copy(pg_admin_url, pg_template) as queued_url,
        postgres_copy(pg_admin_url, pg_template) as local_url,
    ):
        workers = _project(folder / "workers", proxy.url(queued_url))
        local = _project(folder / "local", proxy.url(local_url))
        try:
            scene = _start(float(request.param), processes, workers, local)
            _ride_out(scene, proxy)
            yield scene
        finally:
            processes.stop_all()
            workers.engine.dispose()
            local.engine.dispose()


def _project(root: Path, url: str) -> ProjectOnDisk:
    made = scripted_project(root, url)
    python_pipeline(made, "ride", TASKS)
    return made


def _start(
    seconds: float, processes: Processes, project: ProjectOnDisk, local: ProjectOnDisk
) -> Restart:
    server = processes.start(
        project, "server", "--pool-provider", "queue", *NO_METRICS, settings=RIDING
    )
    slots = ("--ingestion-slots", "2", "--warehouse-slots", "1", *NO_METRICS)
    workers = [start_worker(processes, project, *slots, settings=RIDING)[0] for _ in range(2)]
    local_server = processes.start(local, "server", *NO_METRICS, settings=RIDING)
    port = free_port()
    api = processes.start(
        project, "api", "--port", str(port), settings={"engine_connect_timeout_seconds": "2"}
    )
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url, api)
    return Restart(
        seconds,
        processes,
        Service(project, [server, *workers]),
        Service(local, [local_server]),
        api,
        url,
    )


def _ride_out(scene: Restart, proxy: EngineProxy) -> None:
    services = [scene.workers, scene.local]
    for service in services:
        service.run_id = service.project.queued_run("ride")
    for service in services:
        wait_for(partial(_all_started, service.project), "every task to start")
        service.held = _pids_of(service.project, ("c", "d"))
    with cut_off(proxy):
        for service in services:
            release(service.project, "a")
            release(service.project, "b")
        scene.ready_in_outage = ready(scene.api_url)
        time.sleep(scene.seconds)  # the outage itself; nothing is asserted from its length
        for service in services:
            service.alive_in_outage = [process.poll() is None for process in service.processes]
            service.held_alive_in_outage = [alive(pid) for pid in service.held]
    for service in services:
        release(service.project)
    for service in services:
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline and run_status(service.project, service.run_id) not in (
            "SUCCESS",
            "FAILED",
        ):
            time.sleep(0.1)
        service.final = run_status(service.project, service.run_id)
        service.alive_after = [process.poll() is None for process in service.processes]
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline and (answer := ready(scene.api_url)) != 200:
        time.sleep(0.2)
    scene.ready_after = answer


def _all_started(project: ProjectOnDisk) -> bool:
    return len(starts(project)) == len(TASKS)


def _pids_of(project: ProjectOnDisk, tasks: tuple[str, ...]) -> list[int]:
    codes = dict(
        rows(
            project,
            "SELECT a.ATTEMPT_ID, k.TASK_CODE FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
            "ON t.TASK_RUN_ID = a.TASK_RUN_ID JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID",
        )
    )
    return [pid for attempt, pid in starts(project) if codes[attempt] in tasks]


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


def assert_rode_out(service: Service, processes: Processes) -> None:
    """Nothing exited or was stopped, each task ran once, as its process reported, and the
    services stop cleanly when asked."""
    assert service.alive_in_outage == [True] * len(service.processes)
    assert service.held_alive_in_outage == [True, True]  # nobody stopped them
    assert service.final == "SUCCESS", task_attempts(service.project, service.run_id)
    assert service.alive_after == [True] * len(service.processes)
    assert task_attempts(service.project, service.run_id) == [
        (task, 1, "SUCCESS", "CHILD", "SUCCESS") for task in TASKS
    ]
    assert len(starts(service.project)) == len(TASKS)
    for process in reversed(service.processes):  # the workers first, then their server
        process.terminate()
        assert processes.finish(process).code == 0


def test_the_server_and_its_workers_ride_out_an_engine_db_restart(restart: Restart) -> None:
    assert_rode_out(restart.workers, restart.processes)


def test_the_server_with_its_local_pool_rides_out_an_engine_db_restart(restart: Restart) -> None:
    assert_rode_out(restart.local, restart.processes)


def test_the_api_answers_through_an_engine_db_restart(restart: Restart) -> None:
    assert (restart.ready_in_outage, restart.ready_after) == (503, 200)
    assert restart.api.poll() is None


def test_the_api_answers_a_silent_engine_db_within_its_connect_timeout(
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
    # Connections accepted and never answered: the connect timeout answers instead of a hang.
    with cut_off(engine_proxy, silent=True):
        assert ready(url) == 503
    wait_for(lambda: ready(url) == 200, "the API to be ready again")
    assert api.poll() is None


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


def ready(url: str) -> int:
    try:
        with urllib.request.urlopen(f"{url}/readyz", timeout=15) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
