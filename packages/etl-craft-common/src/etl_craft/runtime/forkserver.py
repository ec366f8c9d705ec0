"""The fork server: one launcher process per owner that forks task processes.

A fresh interpreter spends most of a task start importing SQLAlchemy, psycopg, DuckDB and
sqlglot. The server imports them once and parses the Engine DB statements; once a child is
released it reads the configuration the next ones will have, prepares the engine of their
Engine DB (one connection, closed at once) and forks the next child ahead (the spare). It holds
no connection and starts no thread. A child calls setsid, appends its output to the attempt
log, takes the request's environment and working directory, and runs
``etl_craft.runtime.child`` with the request's arguments: the same task process as a fresh
interpreter, minus the imports.

Protocol, one JSON object per line; requests on the server's stdin, replies on its stdout:

    request   {"argv": [...], "env": {...}, "log": "/path/attempt.log", "cwd": "/path"}
              (taken by the spare: a child forked ahead, waiting in its session for a request)
              {"release": 1234, "go": true}   let child 1234 run its task (false: exit)
    reply     {"pid": 1234}          the child was forked (replies come in request order)
              {"error": "..."}       it could not be
    notice    {"pid": 1234, "code": 0}   a child exited: its code as Popen.returncode gives it
              {"ready": true}        sent once, first: the imports are done

Each child waits on a pipe of its own until it is released (runtime/starter). At stdin EOF
(the owner closed it or died) the server takes no more requests, ends the wait of children
never released (they exit without running their task), reaps its remaining children as they
end, and exits: it never leaves a child of its own behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

# Imported up front so that every child has them already: the point of the server.
import duckdb  # noqa: F401
import psycopg  # noqa: F401
import sqlalchemy.dialects.postgresql.psycopg
import sqlalchemy.dialects.sqlite.pysqlite  # noqa: F401
import sqlglot  # noqa: F401
from setproctitle import setproctitle

import etl_craft.scripting  # noqa: F401  (what every ingestion script imports)
from etl_craft.enginedb.named_statements import DIALECTS, statements
from etl_craft.runtime import child
from etl_craft.runtime.starter import CHILD_MODULE, GO, SERVER_MODULE, START_FD_VARIABLE

REQUESTS, REPLIES = 0, 1
SAFETY_POLL_SECONDS = 1.0


class Server:
    def __init__(self) -> None:
        self.children: set[int] = set()
        self.open = True
        self.pending = b""
        self.waiting: dict[int, int] = {}  # child pid -> its start pipe, until released
        self.spare: Spare | None = None
        self.last: dict[str, Any] | None = None  # the last request, until its child is released
        self.wakeup, wakeup_write = os.pipe()
        self.wakeup_fds = (self.wakeup, wakeup_write)
        for descriptor in self.wakeup_fds:
            os.set_blocking(descriptor, False)
        signal.set_wakeup_fd(wakeup_write)
        signal.signal(signal.SIGCHLD, _ignore)

    def serve(self) -> None:
        while self.open or self.children:
            watched = [REQUESTS, self.wakeup] if self.open else [self.wakeup]
            readable = select.select(watched, [], [], SAFETY_POLL_SECONDS)[0]
            if self.wakeup in readable:
                _drain(self.wakeup)
            self.reap()
            if REQUESTS in readable:
                self.take_requests()

    def take_requests(self) -> None:
        chunk = os.read(REQUESTS, 65536)
        if not chunk:
            self.open = False
            self.close_spare()
            for pid in list(self.waiting):
                self.release(pid, go=False)
            return
        *lines, self.pending = (self.pending + chunk).split(b"\n")
        for line in lines:
            request = json.loads(line)
            if "release" in request:
                self.release(int(request["release"]), go=bool(request["go"]))
                self.get_ready()
                continue
            self.reply(self.launch(request))
            self.last = request

    def launch(self, request: dict[str, Any]) -> dict[str, Any]:
        spare, self.spare = self.spare or self.fork_spare(), None
        if spare is None:
            return {"error": "fork failed: see the fork server's output"}
        with contextlib.suppress(OSError):  # it died: its exit code tells the owner
            os.write(spare.orders, json.dumps(request).encode())
        os.close(spare.orders)
        self.children.add(spare.pid)
        self.waiting[spare.pid] = spare.start
        return {"pid": spare.pid}

    def fork_spare(self) -> Spare | None:
        """Fork the next task process ahead of its request: it waits in a session of its own
        for the request on a pipe, so that a start costs no fork. None when fork failed."""
        orders, ordered = os.pipe()
        waits, start = os.pipe()
        try:
            pid = os.fork()
        except OSError as error:
            for descriptor in (orders, ordered, waits, start):
                os.close(descriptor)
            print(f"fork server: fork failed: {error}", file=sys.stderr)
            return None
        if pid == 0:
            # The other children's pipes too: each must see end of file when it is released.
            close = (*self.wakeup_fds, ordered, start, *self.waiting.values())
            run_spare(orders, waits, close)
        os.close(orders)
        os.close(waits)
        return Spare(pid, ordered, start)

    def get_ready(self) -> None:
        """Read the configuration the next children will have and fork the next spare: once
        the last child is released, so that neither delays its release (the owner sends it as
        soon as its claim committed), and both are done while that child runs its task."""
        if self.last is not None:
            self.prepare(self.last)
            self.last = None
        self.ready_spare()

    def ready_spare(self) -> None:
        if self.open and self.spare is None:
            self.spare = self.fork_spare()

    def close_spare(self) -> None:
        if self.spare is not None:
            os.close(self.spare.orders)  # it reads end of file and exits
            os.close(self.spare.start)
            self.spare = None

    def release(self, pid: int, *, go: bool) -> None:
        start = self.waiting.pop(pid, None)
        if start is None:
            return
        with contextlib.suppress(OSError):  # it has exited already
            if go:
                os.write(start, GO)
        os.close(start)

    def prepare(self, request: dict[str, Any]) -> None:
        try:
            child.prepare(request["argv"], request["env"], request["cwd"])
        except (Exception, SystemExit) as error:  # the children read it themselves instead
            print(f"fork server: the task configuration was not prepared: {error}", file=sys.stderr)

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return  # no child at all
            if pid == 0:
                return
            if self.spare is not None and pid == self.spare.pid:
                self.close_spare()  # died before its request: the next start forks another
                continue
            if pid not in self.children:
                continue  # a spare closed earlier
            self.children.discard(pid)
            self.release(pid, go=False)
            self.reply({"pid": pid, "code": os.waitstatus_to_exitcode(status)})

    def reply(self, message: dict[str, Any]) -> None:
        if not self.open:
            return  # nobody listens any more
        try:
            os.write(REPLIES, json.dumps(message).encode() + b"\n")
        except BrokenPipeError:
            self.open = False


@dataclass(frozen=True)
class Spare:
    pid: int
    orders: int  # where the server writes its request
    start: int  # its start pipe, the server's end


def run_spare(orders: int, waits: int, close: tuple[int, ...]) -> NoReturn:
    """In a spare: let go of the server's descriptors, wait for a request, and become its task
    process; exit at once when the server closes the pipe without one."""
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for descriptor in close:
            os.close(descriptor)
        # Not the server's requests and replies: its owner must see them end with the server.
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, REQUESTS)
        os.dup2(null, REPLIES)
        os.close(null)
        received = b""
        while chunk := os.read(orders, 65536):
            received += chunk
        os.close(orders)
        if not received:
            os._exit(0)
        run_child(json.loads(received), waits)
    except BaseException:
        traceback.print_exc()
    os._exit(code)


def run_child(request: dict[str, Any], waits: int) -> NoReturn:
    """In a spare given its request: become the task process of ``request``, never return."""
    code = 1
    try:
        _redirect(request["log"])
        os.chdir(request["cwd"])
        _take_environment(request["env"])
        os.environ[START_FD_VARIABLE] = str(waits)
        argv = [str(arg) for arg in request["argv"]]
        sys.argv = [child.__file__ or CHILD_MODULE, *argv]
        sys.path[0] = str(Path.cwd())  # as `python -m` started here would have it
        setproctitle(" ".join([sys.executable, "-m", CHILD_MODULE, *argv]))
        child.main(argv)  # exits the process itself
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)


def _take_environment(env: dict[str, str]) -> None:
    """Make ``env`` this process's environment. Most of it is the server's already (the owner
    started the server with its own): only what differs is unset or set, which spares a task
    process the writes to every entry and the pages they would copy."""
    for key in [key for key in os.environ if key not in env]:
        del os.environ[key]
    for key, value in env.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def _redirect(log_path: str) -> None:
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(null)


def _drain(descriptor: int) -> None:
    try:
        while os.read(descriptor, 4096):
            pass
    except BlockingIOError:
        pass


def _ignore(signum: int, frame: FrameType | None) -> None:
    """Only wakes the loop through the wakeup descriptor."""


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the owner decides; stdin EOF ends us
    # Set while the environment is whole: setproctitle makes room for titles from it.
    setproctitle(" ".join([sys.executable, "-m", SERVER_MODULE]))
    for dialect in DIALECTS:  # parsed once here rather than in every child
        for named in statements(dialect).values():
            assert named.clause is not None
    server = Server()
    server.ready_spare()
    server.reply({"ready": True})
    server.serve()


if __name__ == "__main__":
    main()
