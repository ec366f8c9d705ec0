"""deploy/compose/docker-compose.yml started as local processes, from its own definitions.

Without a Docker engine, each etl-craft service of the compose file becomes one process (or
several, as ``--scale`` would make them) with the service's own command, environment, working
directory and health check. What Docker would provide is mapped, and nothing else changes:

- ``${VAR:-default}`` is interpolated as compose does, from the variables the test gives;
- the image is a virtual environment built with the ``uv sync`` line of the service's
  Dockerfile, whose ``bin`` leads the PATH, as ``/opt/etl-craft/bin`` does in the image;
- the postgres service is the test's server: each database the init script creates becomes
  a fresh database of that server, and every URL naming host ``postgres`` is pointed at it
  with the server's credentials;
- bind mounts are temporary copies of their source, named volumes empty folders, and each
  container path in a command, a working directory or a file:// URL is replaced by its local
  folder; a working directory no mount provides is a folder of the replica's own, as a
  container's own file system is;
- each exposed port becomes a free local port, in the command and in the health check.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy.engine import make_url

from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.waiting import wait_for

REPOSITORY = Path(__file__).resolve().parents[3]
FILE_URL = "file://"
COMPOSE_FOLDER = REPOSITORY / "deploy" / "compose"
COMPOSE_FILE = COMPOSE_FOLDER / "docker-compose.yml"
DATABASE_SERVICE = "postgres"
_VARIABLE = re.compile(r"\$\$|\$\{(\w+)(?::-([^}]*))?\}")
_CREATE_DATABASE = re.compile(r"CREATE\s+DATABASE\s+(\w+)", re.IGNORECASE)
_PACKAGE = re.compile(r"uv sync [^\n]*--package (\S+)")


def load_compose(variables: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The compose file with its ``${...}`` interpolated from ``variables``, else defaults."""
    document = yaml.safe_load(COMPOSE_FILE.read_text())
    return _interpolate(document, variables or {})  # type: ignore[no-any-return]


def _interpolate(value: Any, variables: Mapping[str, str]) -> Any:
    if isinstance(value, dict):
        return {key: _interpolate(item, variables) for key, item in value.items()}
    if isinstance(value, list):
        return [_interpolate(item, variables) for item in value]
    if isinstance(value, str):
        return _VARIABLE.sub(lambda match: _resolve(match, variables), value)
    return value


def _resolve(match: re.Match[str], variables: Mapping[str, str]) -> str:
    name, default = match.group(1), match.group(2)
    if name is None:
        return "$"
    if name in variables:
        return variables[name]
    assert default is not None, f"${{{name}}} has no default; the test must give it"
    return default


def package_of(service: Mapping[str, Any]) -> str:
    """The workspace member the service's Dockerfile installs with uv sync."""
    dockerfile = COMPOSE_FOLDER / service["build"]["context"] / service["build"]["dockerfile"]
    found = _PACKAGE.search(dockerfile.read_text())
    assert found, f"{dockerfile} has no 'uv sync ... --package NAME' line"
    return found.group(1)


def build_image(package: str, target: Path) -> Path:
    """The image's venv, as the Dockerfile's builder stage makes it; returns its bin folder."""
    subprocess.run(
        ["uv", "sync", "--locked", "--package", package, "--no-dev", "--no-editable", "--quiet"],
        cwd=REPOSITORY,
        # The builder stage's settings: compiled once there, not by each process's first import.
        env={**os.environ, "UV_PROJECT_ENVIRONMENT": str(target), "UV_COMPILE_BYTECODE": "1"},
        check=True,
        timeout=300,
    )
    return target / "bin"


# Ports handed out already: a service binds its port only once it has started, so until then
# the kernel may offer the same free port again, and two services would race for it (the
# loser's health check then reaches the winner).
_handed_out: set[int] = set()


def free_port() -> int:
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port


@dataclass
class Databases:
    """The postgres service: the init script's databases, made fresh on the test's server."""

    admin_url: str
    names: dict[str, str] = field(default_factory=dict)  # compose name -> fresh name

    def create(self, init_sql: str) -> None:
        for name in _CREATE_DATABASE.findall(init_sql):
            self.names[name] = unique_name(name)
            create_database(self.admin_url, self.names[name])

    def drop(self) -> None:
        for fresh in self.names.values():
            drop_database(self.admin_url, fresh)

    def url(self, compose_name: str) -> str:
        admin = make_url(self.admin_url)
        return admin.set(
            drivername="postgresql", database=self.names[compose_name]
        ).render_as_string(hide_password=False)

    def map_url(self, value: str) -> str:
        """A URL naming the postgres service, pointed at the fresh copy of its database."""
        with contextlib.suppress(Exception):
            url = make_url(value)
            if url.host == DATABASE_SERVICE:
                assert url.database in self.names, (
                    f"{value} names database {url.database}, which the init script never creates"
                )
                admin = make_url(self.admin_url)
                return url.set(
                    host=admin.host,
                    port=admin.port,
                    username=admin.username,
                    password=admin.password,
                    database=self.names[url.database],
                ).render_as_string(hide_password=False)
        return value


@dataclass
class Replica:
    service: str
    process: subprocess.Popen[bytes]
    output: Path
    ports: dict[str, int]


@dataclass
class LocalTopology:
    """The compose services of one test, as local processes."""

    compose: dict[str, Any]
    folder: Path
    images_folder: Path  # kept between topologies: building an image is slow
    databases: Databases
    images: dict[str, Path] = field(default_factory=dict)  # package -> venv bin folder
    mounts: dict[str, Path] = field(default_factory=dict)  # container path -> local folder
    replicas: list[Replica] = field(default_factory=list)

    @property
    def services(self) -> dict[str, Any]:
        """The default deployment's services: one in a profile (Spark's) starts only on request."""
        every: dict[str, Any] = self.compose["services"]
        return {name: service for name, service in every.items() if not service.get("profiles")}

    def prepare(self) -> None:
        """The database server's databases, the volumes and one image per package."""
        postgres = self.services[DATABASE_SERVICE]
        for volume in postgres["volumes"]:
            source = volume.split(":")[0]
            if source.endswith(".sql"):
                self.databases.create((COMPOSE_FOLDER / source).read_text())
        for name, service in self.services.items():
            if name == DATABASE_SERVICE:
                continue
            for volume in service.get("volumes", []):
                self._mount(volume)
            package = package_of(service)
            if package not in self.images:
                self.images[package] = build_image(package, self.images_folder / package)

    def _mount(self, volume: str) -> None:
        source, target = volume.split(":")[:2]
        if target in self.mounts:
            return
        if source.startswith((".", "/")):  # a bind mount: a copy of what it names
            local = self.folder / "mounts" / Path(target).name
            shutil.copytree(COMPOSE_FOLDER / source, local)
        else:  # a named volume: empty at first
            local = self.folder / "volumes" / source
            local.mkdir(parents=True)
        self.mounts[target] = local
        for outer, folder in self.mounts.items():
            if target.startswith(outer + "/"):  # nested: the volume appears inside the mount
                inside = folder / target.removeprefix(outer + "/")
                if inside.is_dir():
                    shutil.rmtree(inside)
                inside.symlink_to(local, target_is_directory=True)

    def local_path(self, text: str) -> str:
        if text.startswith(FILE_URL):
            return FILE_URL + self.local_path(text.removeprefix(FILE_URL))
        for target in sorted(self.mounts, key=len, reverse=True):
            if text == target or text.startswith(target + "/"):
                return str(self.mounts[target]) + text.removeprefix(target)
        return text

    def working_dir(self, name: str, replica: int = 0) -> str:
        """The service's working directory: in a mount, else in the replica's own folder."""
        inside = self.services[name]["working_dir"]
        local = self.local_path(inside)
        if local != inside:
            return local
        own = self.folder / "containers" / f"{name}-{replica}" / inside.lstrip("/")
        own.mkdir(parents=True, exist_ok=True)
        return str(own)

    def environment(self, name: str) -> dict[str, str]:
        service = self.services[name]
        package = package_of(service)
        base = {key: value for key, value in os.environ.items() if not key.startswith("ETL_CRAFT_")}
        base["PATH"] = f"{self.images[package]}{os.pathsep}{base['PATH']}"
        base.pop("VIRTUAL_ENV", None)
        for key, value in service.get("environment", {}).items():
            base[key] = self.databases.map_url(self.local_path(str(value)))
        return base

    def _localise(self, words: list[str], ports: Mapping[str, int]) -> list[str]:
        return [self._localise_word(self.local_path(word), ports) for word in words]

    @staticmethod
    def _localise_word(word: str, ports: Mapping[str, int]) -> str:
        for exposed, port in ports.items():
            if word == exposed:
                return str(port)
            word = word.replace(f":{exposed}/", f":{port}/")
        return word

    def command(self, name: str, ports: Mapping[str, int] | None = None) -> list[str]:
        command = self.services[name]["command"]
        words = shlex.split(command) if isinstance(command, str) else list(command)
        return self._localise(words, ports or {})

    def health_command(self, name: str, ports: Mapping[str, int]) -> list[str]:
        test = self.services[name]["healthcheck"]["test"]
        if test[0] == "CMD-SHELL":
            return ["sh", "-c", self._localise([test[1]], ports)[0]]
        assert test[0] == "CMD", f"{name}: healthcheck test {test!r} is not CMD or CMD-SHELL"
        return self._localise(test[1:], ports)

    def start(self, name: str, **extra_env: str) -> Replica:
        ports = {exposed: free_port() for exposed in self.services[name].get("expose", [])}
        output = self.folder / f"{name}-{len(self.replicas)}.out"
        with output.open("wb") as sink:
            process = subprocess.Popen(
                self.command(name, ports),
                cwd=self.working_dir(name, len(self.replicas)),
                env={**self.environment(name), **extra_env},
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        replica = Replica(name, process, output, ports)
        self.replicas.append(replica)
        return replica

    def run_to_end(self, name: str, timeout: float = 120) -> str:
        """A one-shot service, run to its end; its output."""
        replica = self.start(name)
        code = replica.process.wait(timeout=timeout)
        text = replica.output.read_text(errors="replace")
        assert code == 0, f"{name} exited {code}:\n{text}"
        return text

    def exec(self, name: str, *command: str) -> str:
        """``docker compose exec NAME COMMAND``: in the service's image, environment and folder."""
        done = subprocess.run(
            self._localise(list(command), {}),
            cwd=self.working_dir(name),
            env=self.environment(name),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{name}: {command!r} exited {done.returncode}: {done.stderr}"
        return done.stdout

    def healthy(self, replica: Replica) -> bool:
        assert replica.process.poll() is None, (
            f"{replica.service} exited {replica.process.returncode}:\n"
            + replica.output.read_text(errors="replace")
        )
        check = subprocess.run(
            self.health_command(replica.service, replica.ports),
            cwd=self.working_dir(replica.service),
            env=self.environment(replica.service),
            capture_output=True,
            timeout=30,
            check=False,
        )
        return check.returncode == 0

    def up(self, scale: Mapping[str, int] | None = None) -> dict[str, list[Replica]]:
        """Every service in depends_on order, each waited for as its dependants' condition asks."""
        started: dict[str, list[Replica]] = {}
        for name in self.order():
            if name == DATABASE_SERVICE:
                continue
            if self._condition_on(name) == "service_completed_successfully":
                self.run_to_end(name)
                started[name] = []
                continue
            started[name] = [self.start(name) for _ in range((scale or {}).get(name, 1))]
        for replicas in started.values():
            for replica in replicas:
                wait_for(partial(self.healthy, replica), f"{replica.service} to be healthy")
        return started

    def order(self) -> list[str]:
        done: list[str] = []

        def visit(name: str) -> None:
            if name in done:
                return
            for upstream in self.services[name].get("depends_on", {}):
                visit(upstream)
            done.append(name)

        for name in self.services:
            visit(name)
        return done

    def _condition_on(self, name: str) -> str | None:
        conditions = {
            dependency["condition"]
            for service in self.services.values()
            for upstream, dependency in service.get("depends_on", {}).items()
            if upstream == name
        }
        assert len(conditions) <= 1, f"services wait for {name} in different ways: {conditions}"
        return next(iter(conditions), None)

    def kill(self, replica: Replica) -> None:
        """kill -9 the replica and every process it started, as a container's death does."""
        for pid in [replica.process.pid, *descendants(replica.process.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        replica.process.wait()

    def down(self) -> None:
        for replica in self.replicas:
            if replica.process.poll() is None:
                self.kill(replica)
        self.databases.drop()


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid``, task processes in sessions of their own included."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                parent = int(stat.rsplit(")", 1)[1].split()[1])
                parents.setdefault(parent, []).append(int(entry.name))
    found, pending = [], [pid]
    while pending:
        children = parents.get(pending.pop(), [])
        found += children
        pending += children
    return found


@contextlib.contextmanager
def local_topology(
    admin_url: str, folder: Path, images: Path, variables: Mapping[str, str] | None = None
) -> Iterator[LocalTopology]:
    topology = LocalTopology(load_compose(variables), folder, images, Databases(admin_url))
    try:
        topology.prepare()
        yield topology
    finally:
        topology.down()
