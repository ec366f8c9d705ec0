"""Several hosts on one machine for the chaos suite: a PostgreSQL warehouse, workers under
hostnames of their own, processes paused and resumed with real signals, and an Engine DB
connection the test can cut.

A worker started by ``start_worker`` runs in a UTS namespace of its own (``unshare -u``) with
its own hostname, so the overseer sees its attempts as another host's: it can neither check
their processes nor stop them, exactly as in a multi-host deployment.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from etl_craft.config.connector import load_connector
from tests.chaos.harness import rows
from tests.fixtures.processes import ETL_CRAFT, Processes, process_env
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

UNSHARE = "/usr/bin/unshare"
# A process's start (imports, fork server) on a loaded CI machine can take a minute.
STARTUP_SECONDS = 300.0


def with_pg_warehouse(project: ProjectOnDisk, warehouse_url: str) -> ProjectOnDisk:
    """The project, its warehouse moved to PostgreSQL.

    On DuckDB one process at a time opens the warehouse file, so a paused task process would
    stall every other writer and the overseer's ledger reads too; see the fencing docs.
    """
    (project.root / "craft-connector.yml").write_text(
        "Engine:\n  url: ${TEST_ENGINE_URL}\n"
        "Warehouse:\n  type: postgresql\n  url: ${TEST_WAREHOUSE_URL}\n"
    )
    with (project.root / ".env").open("a") as env:
        env.write(f"TEST_WAREHOUSE_URL={warehouse_url}\n")
    environ = dict(line.split("=", 1) for line in (project.root / ".env").read_text().split())
    connector = load_connector(project.config, profile=None, environ=environ)
    return ProjectOnDisk(project.root, connector, project.engine)


def warehouse_rows(url: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return [tuple(row) for row in conn.execute(sql, list(params) or None).fetchall()]


def warehouse_execute(url: str, sql: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


def waiting_on_lock(url: str) -> bool:
    """Some warehouse session waits on a lock (the retry, queued behind a paused attempt)."""
    found = warehouse_rows(
        url,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock'",
    )
    return int(found[0][0]) > 0


def start_worker(
    processes: Processes,
    project: ProjectOnDisk,
    host: str,
    *,
    fault: str | None = None,
    engine_url: str | None = None,
    wait: bool = True,
) -> subprocess.Popen[bytes]:
    """``etl-craft worker`` under hostname ``host``, registered unless ``wait`` is false;
    ``engine_url`` overrides the project's."""
    env = process_env(fault)
    if engine_url is not None:
        env["TEST_ENGINE_URL"] = engine_url
    command = f'hostname {host} && exec "$0" worker --warehouse-slots 1 --metrics-port 0'
    worker = processes.spawn(project, [UNSHARE, "-u", "sh", "-c", command, ETL_CRAFT], env)
    if wait:
        wait_registered(project, host, worker)
    return worker


def wait_registered(project: ProjectOnDisk, host: str, worker: subprocess.Popen[bytes]) -> None:
    wait_for(
        lambda: _registered(project, host, worker),
        f"the worker on {host} to register",
        STARTUP_SECONDS,
    )


def _registered(project: ProjectOnDisk, host: str, worker: subprocess.Popen[bytes]) -> bool:
    assert worker.poll() is None, f"the worker on {host} exited with code {worker.returncode}"
    found = rows(project, "SELECT count(*) FROM AUD_WORKERS WHERE WORKER_ID LIKE :h", h=f"{host}:%")
    return int(found[0][0]) > 0


def start_server(processes: Processes, project: ProjectOnDisk) -> None:
    """The overseer on this host, queueing attempts for workers; see ``wait_leading``."""
    processes.start(project, "server", "--pool-provider", "queue", "--metrics-port", "0")


def wait_leading(project: ProjectOnDisk) -> None:
    wait_for(
        lambda: bool(rows(project, "SELECT 1 FROM AUD_OVERSEERS")),
        "the server to lead",
        STARTUP_SECONDS,
    )


def process_state(pid: int) -> str | None:
    """The kernel's state letter of ``pid`` (T: stopped, Z: zombie), None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[0]


def stopped(pid: int) -> bool:
    return process_state(pid) == "T"


def gone(pid: int) -> bool:
    return process_state(pid) in (None, "Z")


def pause(pid: int) -> None:
    os.kill(pid, signal.SIGSTOP)
    wait_for(lambda: stopped(pid), f"process {pid} to stop")


def resume(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)


@dataclass
class EngineProxy:
    """A TCP relay between workers and the Engine DB's PostgreSQL, which the test can cut.

    ``cut`` drops every relayed connection and refuses new ones, as a network partition between
    a worker host and the Engine DB would; ``restore`` accepts again.
    """

    upstream: tuple[str, int]
    listener: socket.socket = field(init=False)
    port: int = field(init=False)
    _open: bool = True
    _closing: bool = False
    _links: list[socket.socket] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, engine_url: str) -> str:
        host_port = f"{self.upstream[0]}:{self.upstream[1]}"
        assert host_port in engine_url, engine_url
        return engine_url.replace(host_port, f"127.0.0.1:{self.port}")

    def cut(self) -> None:
        with self._lock:
            self._open = False
            for link in self._links:
                with contextlib.suppress(OSError):
                    link.shutdown(socket.SHUT_RDWR)
                link.close()
            self._links.clear()

    def restore(self) -> None:
        with self._lock:
            self._open = True

    def close(self) -> None:
        self._closing = True
        self.cut()
        self.listener.close()

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                if not self._open:
                    client.close()
                    continue
                server = socket.create_connection(self.upstream)
                self._links += [client, server]
            threading.Thread(target=self._relay, args=(client, server), daemon=True).start()

    def _relay(self, client: socket.socket, server: socket.socket) -> None:
        ends = {client: server, server: client}
        try:
            while True:
                readable, _, _ = select.select(list(ends), [], [], 1.0)
                for end in readable:
                    data = end.recv(65536)
                    if not data:
                        return
                    ends[end].sendall(data)
        except (OSError, ValueError):
            return
        finally:
            for end in ends:
                end.close()
