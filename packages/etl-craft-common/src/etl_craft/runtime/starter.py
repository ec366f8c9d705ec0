"""Starting a task process: forked by this owner's fork server, or as a fresh interpreter.

``ETL_CRAFT_TASK_START=fork`` (the default) asks the owner's fork server, which has imported
the handlers and drivers once, to fork the child; ``spawn`` starts a fresh interpreter per
attempt. Either way the task process runs ``etl_craft.runtime.child`` in a session of its own
with its output appended to the attempt log. The protocol is described in runtime/forkserver.

A task process prepares, then waits on a pipe (``ETL_CRAFT_START_FD``) before it runs its
task: the owner records it RUNNING with its pid first, so that a task never runs unrecorded,
and then releases it: a byte to go, end of file to exit at once. An owner that dies before it
releases a task process closes that pipe with its death, and the task never runs.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import subprocess
import sys
import threading
from functools import cache
from pathlib import Path
from typing import Any, Protocol

CHILD_MODULE = "etl_craft.runtime.child"
SERVER_MODULE = "etl_craft.runtime.forkserver"
CLOSE_TIMEOUT_SECONDS = 5.0
START_FD_VARIABLE = "ETL_CRAFT_START_FD"
GO = b"1"
# ServiceSettings.task_start, read without the settings' imports by start_fork_server.
TASK_START_VARIABLE = "ETL_CRAFT_TASK_START"


class TaskProcess(Protocol):
    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...

    def release(self, *, go: bool) -> None:
        """Let the waiting task process run its task, or (``go`` false) exit without it."""
        ...

    def exit_descriptor(self) -> int:
        """A new descriptor that turns readable when the process may have exited; close it."""
        ...


def start_task(argv: list[str], env: dict[str, str], log_path: Path) -> TaskProcess:
    """Start ``python -m etl_craft.runtime.child *argv`` the way ETL_CRAFT_TASK_START says."""
    if _task_start() == "spawn":
        return Spawned.start(argv, env, log_path)
    return fork_server().start(argv, env, log_path)


@cache
def _task_start() -> str:
    """Read once per owner process: the owner's environment does not change while it runs."""
    # Imported here: the CLI imports this module to start the fork server early, before the
    # settings' pydantic and SQLAlchemy (see start_fork_server).
    from etl_craft.config.settings import load_settings  # noqa: PLC0415

    return load_settings().task_start


def start_fork_server() -> None:
    """Start this owner's fork server now without waiting for its imports, so that they run
    while the owner prepares (its own imports, the run's admission) and its first task starts
    as fast as the next. Nothing to do when task processes start as fresh interpreters; an
    invalid setting is reported by the first start."""
    if os.environ.get(TASK_START_VARIABLE, "fork").lower() != "spawn":
        fork_server()


def prepare_task_start() -> None:
    """Start the fork server now and wait for its imports (a second or two), so that a
    long-running owner's first task starts as fast as the next and no lease of a claimed
    attempt runs out meanwhile; nothing to do for fresh interpreters."""
    if _task_start() == "fork":
        fork_server().wait_ready()


class Spawned:
    """A fresh interpreter: its pid stays ours until poll() or wait() reaps it."""

    def __init__(self, process: subprocess.Popen[bytes], start: int) -> None:
        self.process, self.start_pipe = process, start

    @classmethod
    def start(cls, argv: list[str], env: dict[str, str], log_path: Path) -> Spawned:
        waits, start = os.pipe()
        try:
            with log_path.open("ab") as log:
                process = subprocess.Popen(
                    [sys.executable, "-m", CHILD_MODULE, *argv],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env={**env, START_FD_VARIABLE: str(waits)},
                    start_new_session=True,
                    pass_fds=(waits,),
                )
        except BaseException:
            os.close(start)
            raise
        finally:
            os.close(waits)
        return cls(process, start)

    def release(self, *, go: bool) -> None:
        with contextlib.suppress(OSError):  # OSError: it has exited already
            if go:
                os.write(self.start_pipe, GO)
        os.close(self.start_pipe)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def poll(self) -> int | None:
        return self.process.poll()

    def wait(self) -> int:
        return self.process.wait()

    def exit_descriptor(self) -> int:
        return os.pidfd_open(self.process.pid)


class Forked:
    """A child of the fork server: its exit code arrives as the server's notification."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self.server, self.pid = server, pid
        self.returncode: int | None = None
        # The server hands each exit code out once: two threads polling unguarded (an
        # owner's loop and its heartbeat) could both miss it, and one overwrite it with None.
        self._lock = threading.Lock()

    def release(self, *, go: bool) -> None:
        self.server.release(self.pid, go=go)

    def poll(self) -> int | None:
        with self._lock:
            if self.returncode is None:
                self.returncode = self.server.exit_code(self.pid, block=False)
            return self.returncode

    def wait(self) -> int:
        with self._lock:
            if self.returncode is None:
                self.returncode = self.server.exit_code(self.pid, block=True)
            assert self.returncode is not None
            return self.returncode

    def exit_descriptor(self) -> int:
        # The server reaps its children, so a pidfd opened now could name a reused pid; its
        # notifications pipe turns readable when any child has exited.
        return os.dup(self.server.notifications)


class ForkServer:
    """The client of one fork server process; safe to use from several threads."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", SERVER_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,  # the terminal's ^C is for the owner, not for the server
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.requests = self.process.stdin
        self.notifications = self.process.stdout.fileno()
        self._lock = threading.Lock()
        self._pending = b""
        self._launched: list[dict[str, Any]] = []
        self._codes: dict[int, int] = {}
        self.ready = False
        self.used = False  # whether it was asked for a task process

    def start(self, argv: list[str], env: dict[str, str], log_path: Path) -> Forked:
        request = {"argv": argv, "env": env, "log": str(log_path), "cwd": str(Path.cwd())}
        with self._lock:
            self.used = True
            self.requests.write(json.dumps(request).encode() + b"\n")
            self.requests.flush()
            while not self._launched:
                self._read()
            reply = self._launched.pop(0)
        if "error" in reply:
            raise OSError(f"the fork server could not start the task process: {reply['error']}")
        return Forked(self, int(reply["pid"]))

    def release(self, pid: int, *, go: bool) -> None:
        with self._lock:
            self.requests.write(json.dumps({"release": pid, "go": go}).encode() + b"\n")
            self.requests.flush()

    def wait_ready(self) -> None:
        """Until the server has done its imports, so that the next start costs a fork."""
        with self._lock:
            while not self.ready:
                self._read()

    def exit_code(self, pid: int, *, block: bool) -> int | None:
        with self._lock:
            ready = select.select([self.notifications], [], [], 0)[0]
            while ready or (block and pid not in self._codes):
                self._read()
                ready = select.select([self.notifications], [], [], 0)[0]
            return self._codes.pop(pid, None)

    def close(self, timeout: float = CLOSE_TIMEOUT_SECONDS) -> None:
        """The server exits once its last child has exited; it is waited for ``timeout``."""
        if not self.requests.closed:
            self.requests.close()
        if not self.used:
            # Started ahead of tasks that never came: none of its children ran a task (a
            # spare exits when the server dies), and it may still be importing for a second.
            self.process.terminate()
        # Should children still run, the server reaps them, then exits on its own.
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout)
            assert self.process.stdout is not None
            self.process.stdout.close()

    def _read(self) -> None:
        """Read what the server sent (blocking until something comes) and file each message."""
        chunk = os.read(self.notifications, 65536)
        if not chunk:
            code = self.process.wait()
            raise OSError(
                f"the fork server (pid {self.process.pid}) exited with code {code}; its task "
                "processes' exit codes are lost. See its output above; ETL_CRAFT_TASK_START=spawn "
                "starts task processes without it"
            )
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        for line in lines:
            message = json.loads(line)
            if "ready" in message:
                self.ready = True
            elif "code" in message:
                self._codes[int(message["pid"])] = int(message["code"])
            else:
                self._launched.append(message)


_servers: dict[int, ForkServer] = {}  # by owner pid: a forked owner starts its own


def fork_server() -> ForkServer:
    """This process's fork server, started on first use."""
    server = _servers.get(os.getpid())
    if server is None or server.requests.closed or server.process.poll() is not None:
        server = _servers[os.getpid()] = ForkServer()
        atexit.register(server.close)
    return server
