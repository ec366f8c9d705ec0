"""deploy/compose's images built and run on a Docker engine, as deploy/compose/README.md runs them.

What test_compose_topology.py does with local processes, this does with the real images: it
builds them from the repository with the compose file, brings the deployment up from
deploy/compose (the project ``etl-craft`` that its .env names) and waits for every health
check, makes an operator token inside the API container, triggers ``orders`` through the
published API and follows it to SUCCESS, then scales ``worker-ingestion`` to two replicas,
``docker kill``s the one whose ``land_orders`` attempt is running (held mid-statement by a lock
on ``lnd.orders``), and checks that the run still ends SUCCESS with every order in the
warehouse once. Teardown stops each etl-craft service, timed, then ``down --volumes`` removes
the containers, network and volumes; the images stay.

Marked ``containers`` and deselected by default (pyproject.toml's addopts). From the
repository root:

    uv run --all-packages pytest -m containers tests/e2e/compose/test_containers.py

It needs a Docker engine that answers ``docker info`` (``DOCKER_HOST`` is honoured) and builds
with BuildKit; ``docker compose`` (the plugin) or else ``docker-compose`` 1.29; the base images
the Dockerfiles name (``python:3.12-slim-bookworm``, ``ghcr.io/astral-sh/uv:0.13``,
``postgres:17-bookworm``) on the engine or pullable; PyPI reachable from the builds. Without an
engine or a compose tool it skips. Containers or volumes of a project ``etl-craft`` already on
the engine make it fail rather than replace that deployment. It prints what it measures (build
time, image sizes, time to healthy, time from the kill to SUCCESS, stop times) as it goes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.compose.example_project import (
    ENGINE,
    TASK_POOLS,
    WAREHOUSE,
    WAREHOUSE_QUERIES,
    Api,
    expected_rows,
)
from tests.e2e.compose.topology import COMPOSE_FOLDER, DATABASE_SERVICE, load_compose
from tests.fixtures.processes import free_port
from tests.fixtures.waiting import wait_for

pytestmark = [pytest.mark.containers, pytest.mark.timeout(3600)]

PROJECT = "etl-craft"  # what deploy/compose/.env names it
# Shorter leases than the defaults, as an operator may set them: a lost attempt is retried
# after its lease and two more have passed (docs/concepts/leases.md).
VARIABLES = {
    "ETL_CRAFT_LEASE_SECONDS": "20",
    "ETL_CRAFT_HEARTBEAT_SECONDS": "5",
    "ETL_CRAFT_LOG_FORMAT": "text",
}
LONG_RUNNING = (DATABASE_SERVICE, "overseer", "worker-ingestion", "worker-warehouse", "api")
STOPPED_IN_ORDER = ("worker-ingestion", "worker-warehouse", "overseer", "api", DATABASE_SERVICE)
ATTEMPTS = (
    "SELECT k.TASK_CODE, a.ATTEMPT_NUMBER, a.STATUS, a.POOL, a.OUTCOME_SOURCE, w.HOST "
    "FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
    "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
    "LEFT JOIN AUD_WORKERS w ON w.WORKER_ID = a.OWNER_ID "
    "WHERE t.PIPELINE_RUN_ID = {run_id} ORDER BY a.ATTEMPT_ID"
)


def run(*command: str, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    done = subprocess.run(
        command,
        check=False,
        cwd=COMPOSE_FOLDER,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, (
        f"{shlex.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


def answers(*command: str) -> bool:
    try:
        return subprocess.run(command, check=False, capture_output=True, timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def compose_tools() -> list[tuple[str, ...]]:
    """The compose commands on this machine: the Docker CLI plugin, the standalone 1.x."""
    tools: list[tuple[str, ...]] = []
    if shutil.which("docker") and answers("docker", "compose", "version"):
        tools.append(("docker", "compose"))
    if shutil.which("docker-compose"):
        tools.append(("docker-compose",))
    return tools


@dataclass
class Deployment:
    compose: tuple[str, ...]
    environment: dict[str, str]
    report: Callable[[str], None]

    def __call__(self, *arguments: str, timeout: float = 900) -> str:
        return run(*self.compose, *arguments, env=self.environment, timeout=timeout)

    @contextlib.contextmanager
    def timed(self, what: str) -> Iterator[None]:
        started = time.monotonic()
        yield
        self.report(f"{what}: {time.monotonic() - started:.1f} s")

    def containers(self, service: str, *, stopped: bool = False) -> list[str]:
        """The full ids of a service's containers, found by the labels both tools set."""
        found = run(
            "docker", "ps", "--quiet", "--no-trunc", *(["--all"] if stopped else []),
            "--filter", f"label=com.docker.compose.project={PROJECT}",
            "--filter", f"label=com.docker.compose.service={service}",
        )  # fmt: skip
        return found.split()

    def state(self, container: str, template: str) -> str:
        return run("docker", "inspect", "--format", template, container).strip()

    def healthy(self, *services: str) -> bool:
        health = "{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}"
        found = {service: self.containers(service) for service in services}
        return all(found.values()) and all(
            self.state(container, health) == "healthy"
            for containers in found.values()
            for container in containers
        )

    def psql(self, database: str, sql: str) -> list[tuple[str, ...]]:
        """Rows as psql prints them unaligned: each value as text."""
        [postgres] = self.containers(DATABASE_SERVICE)
        printed = run(
            "docker", "exec", postgres, "psql", "--username", "etl_craft", "--dbname", database,
            "--no-align", "--tuples-only", "--field-separator", "|", "--set", "ON_ERROR_STOP=1",
            "--command", sql,
        )  # fmt: skip
        return [tuple(line.split("|")) for line in printed.splitlines() if line]

    @contextlib.contextmanager
    def locked(self, database: str, table: str) -> Iterator[None]:
        """``table`` held ACCESS EXCLUSIVE by a session of its own until the block ends."""
        [postgres] = self.containers(DATABASE_SERVICE)
        holder = subprocess.Popen(
            ["docker", "exec", "--interactive", postgres, "psql", "--username", "etl_craft",
             "--dbname", database, "--set", "ON_ERROR_STOP=1"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert holder.stdin is not None
        holder.stdin.write(f"BEGIN;\nLOCK TABLE {table} IN ACCESS EXCLUSIVE MODE;\n")
        holder.stdin.flush()
        schema, name = table.split(".")
        granted = (
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            f"WHERE n.nspname = '{schema}' AND c.relname = '{name}' "
            "AND l.mode = 'AccessExclusiveLock' AND l.granted"
        )
        try:
            wait_for(lambda: self.psql(database, granted) == [("1",)], f"{table} locked", 60, 1)
            yield
        finally:
            _, errors = holder.communicate("ROLLBACK;\n", timeout=60)
            assert holder.returncode == 0, f"the session locking {table} failed: {errors}"

    def attempts(self, run_id: int) -> list[tuple[str, ...]]:
        """(task, attempt number, status, pool, outcome source, worker host) of a run."""
        return self.psql(ENGINE, ATTEMPTS.format(run_id=int(run_id)))

    def warehouse_rows(self) -> dict[str, list[tuple[str, ...]]]:
        return {table: self.psql(WAREHOUSE, sql) for table, sql in WAREHOUSE_QUERIES.items()}

    def follow(self, api: Api, run_id: int, timeout: float) -> str:
        wait_for(lambda: api.ended(run_id), f"run {run_id} to end", timeout, 1)
        return api.status(run_id)


def as_printed(rows: dict[str, list[tuple[Any, ...]]]) -> dict[str, list[tuple[str, ...]]]:
    return {table: [tuple(map(str, row)) for row in found] for table, found in rows.items()}


@pytest.fixture(scope="module")
def deployment(request: pytest.FixtureRequest) -> Iterator[Deployment]:
    tools = compose_tools()
    if not tools:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    if not answers("docker", "info"):
        pytest.skip("no Docker engine answers `docker info`")
    leftovers = run(
        "docker", "ps", "--all", "--quiet", "--filter", f"label=com.docker.compose.project={PROJECT}"
    ).split() + run(
        "docker", "volume", "ls", "--quiet",
        "--filter", f"label=com.docker.compose.project={PROJECT}",
    ).split()  # fmt: skip
    if leftovers:
        pytest.fail(
            f"the Docker engine already has containers or volumes of the compose project "
            f"{PROJECT!r} ({len(leftovers)}), which this test would replace and delete: "
            f"remove that deployment first (`docker compose down --volumes` in deploy/compose "
            f"deletes its databases too) or run the test against another engine"
        )
    plugins = request.config.pluginmanager
    terminal, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")

    def report(line: str) -> None:
        # Past output capture: the figures are what a person runs this test for.
        if terminal is None:
            return
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            terminal.write_line(f"[containers] {line}")

    # The compose file's own variables come from here and deploy/compose/.env only.
    inherited = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("COMPOSE_", "ETL_CRAFT_")) and key != "POSTGRES_PASSWORD"
    }
    environment = (
        inherited
        | VARIABLES
        | {
            "ETL_CRAFT_API_PORT": f"127.0.0.1:{free_port()}",
            # docker-compose 1.x builds through the docker CLI with BuildKit only when asked; the
            # Dockerfiles' RUN --mount needs BuildKit.
            "DOCKER_BUILDKIT": "1",
            "COMPOSE_DOCKER_CLI_BUILD": "1",
        }
    )
    deployment = Deployment(tools[0], environment, report)
    engine = run("docker", "version", "--format", "{{.Server.Version}}").strip()
    report(f"{shlex.join(tools[0])} against Docker engine {engine}")
    try:
        with deployment.timed("build the images"):
            deployment("build", timeout=3000)
        for image in sorted(
            {s["image"] for s in load_compose()["services"].values() if "build" in s}
        ):
            size = int(run("docker", "image", "inspect", "--format", "{{.Size}}", image))
            report(f"image {image}: {size / 1e6:.0f} MB")
        with deployment.timed("up until every service is healthy"):
            deployment("up", "--detach")
            wait_for(lambda: deployment.healthy(*LONG_RUNNING), "every service healthy", 600, 2)
        yield deployment
    finally:
        try:
            for service in STOPPED_IN_ORDER:
                with deployment.timed(f"stop {service}"):
                    deployment("stop", service, timeout=300)
        finally:
            deployment("down", "--volumes", "--remove-orphans", timeout=300)


@pytest.fixture(scope="module")
def api(deployment: Deployment) -> Api:
    """An operator token made inside the API's container, and the API's published address."""
    [container] = deployment.containers("api")
    created = run(
        "docker", "exec", container, "etl-craft", "token", "create",
        "--name", "containers_e2e", "--role", "operator", "--format", "json",
    )  # fmt: skip
    return Api(
        f"http://{deployment.environment['ETL_CRAFT_API_PORT']}", json.loads(created)["token"]
    )


@pytest.fixture(scope="module")
def first_run(deployment: Deployment, api: Api) -> int:
    with deployment.timed("first run, triggered to SUCCESS"):
        run_id = api.trigger("orders", "containers-1")
        status = deployment.follow(api, run_id, timeout=300)
    assert status == "SUCCESS", deployment.attempts(run_id)
    return run_id


def test_each_compose_tool_here_accepts_the_file() -> None:
    tools = compose_tools()
    if not tools:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    for tool in tools:
        run(*tool, "config", "--quiet")


def test_a_run_triggered_through_the_api_lands_the_orders(
    deployment: Deployment, first_run: int
) -> None:
    [migrate] = deployment.containers("migrate", stopped=True)
    assert deployment.state(migrate, "{{.State.Status}} {{.State.ExitCode}}") == "exited 0"
    hosts = {
        pool: deployment.containers(f"worker-{pool}")[0][:12] for pool in set(TASK_POOLS.values())
    }

    # Each task ran once, in its pool, on that pool's worker container.
    assert deployment.attempts(first_run) == [
        (task, "1", "SUCCESS", pool, "CHILD", hosts[pool]) for task, pool in TASK_POOLS.items()
    ]
    assert deployment.warehouse_rows() == as_printed(expected_rows(runs=1))


def test_a_worker_container_killed_mid_attempt_leaves_the_run_to_its_other_replica(
    deployment: Deployment, api: Api, first_run: int
) -> None:
    deployment("up", "--detach", "--scale", "worker-ingestion=2")
    wait_for(
        lambda: (
            len(deployment.containers("worker-ingestion")) == 2
            and deployment.healthy("worker-ingestion")
        ),
        "two healthy worker-ingestion replicas",
        300,
        2,
    )
    replicas = deployment.containers("worker-ingestion")

    with deployment.locked(WAREHOUSE, "lnd.orders"):
        run_id = api.trigger("orders", "containers-2")
        wait_for(lambda: landing_waits_on_the_lock(deployment), "land_orders to wait", 120, 1)
        [(_, _, at_kill, _, _, host)] = deployment.attempts(run_id)
        [victim] = [replica for replica in replicas if replica.startswith(host)]
        run("docker", "kill", "--signal", "KILL", victim)
        killed = time.monotonic()
    status = deployment.follow(api, run_id, timeout=600)
    deployment.report(f"kill to run SUCCESS: {time.monotonic() - killed:.1f} s")

    assert (at_kill, status) == ("RUNNING", "SUCCESS")
    [survivor] = [replica[:12] for replica in replicas if replica != victim]
    landing = [row[1:] for row in deployment.attempts(run_id) if row[0] == "land_orders"]
    assert landing == [
        ("1", "LOST", "ingestion", "RECONCILER", host),
        ("2", "SUCCESS", "ingestion", "CHILD", survivor),
    ]
    # Each order once: the lost attempt's rows never committed and the retry landed them.
    assert deployment.warehouse_rows() == as_printed(expected_rows(runs=2))


def landing_waits_on_the_lock(deployment: Deployment) -> bool:
    waiting = deployment.psql(
        WAREHOUSE,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock' AND query LIKE '%lnd.orders%'",
    )
    return waiting != [("0",)]
