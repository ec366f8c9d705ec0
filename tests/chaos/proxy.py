"""A TCP proxy between etl-craft's processes and the test's PostgreSQL, which a test cuts.

The machine's PostgreSQL is shared by other tests, so a restart is played at the proxy: ``cut``
drops every connection through it and refuses new ones (as a restarting server does), or
with ``silent`` accepts them and never answers (a network that black-holes packets);
``freeze`` keeps every connection open and stops forwarding on them, with no reset and no
error (a network gone silent under established connections); ``restore`` lets connections
through again (a frozen one passes on what waited).
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.fixtures.processes import scripted_project
from tests.fixtures.projects import ProjectOnDisk

CHUNK = 65536


class EngineProxy:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._held: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self._silent = False
        self._frozen = threading.Event()
        self._closed = False
        self.port = self._listen(0)

    def url(self, url: str) -> str:
        """``url`` with its host and port replaced by the proxy's."""
        return make_url(url).set(host="127.0.0.1", port=self.port).render_as_string(False)

    def cut(self, *, silent: bool = False) -> None:
        with self._lock:
            self._silent = silent
            if not silent and self._listener is not None:
                _close(
                    self._listener
                )  # shut down first: that wakes its accept() and frees the port
                self._listener = None
            for pair in self._pairs:
                for end in pair:
                    _close(end)
            self._pairs.clear()

    def freeze(self) -> None:
        with self._lock:
            self._silent = True
            self._frozen.set()

    def restore(self) -> None:
        with self._lock:
            self._silent = False
            self._frozen.clear()
            for held in self._held:
                _close(held)
            self._held.clear()
            if self._listener is None:
                self._listen(self.port)

    def close(self) -> None:
        self._closed = True
        self.cut()
        self.restore()
        with self._lock:
            if self._listener is not None:
                _close(self._listener)
                self._listener = None

    def _listen(self, port: int) -> int:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return int(listener.getsockname()[1])

    def _accept(self, listener: socket.socket) -> None:
        while not self._closed:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by cut or close
            with self._lock:
                if self._silent:
                    self._held.append(client)
                    continue
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._pairs.append((client, server))
            threading.Thread(target=self._relay, args=(client, server), daemon=True).start()

    def _relay(self, client: socket.socket, server: socket.socket) -> None:
        ends = {client: server, server: client}
        try:
            while True:
                if self._frozen.is_set():
                    time.sleep(0.02)  # nothing is read, so nothing is answered or closed
                    continue
                readable = select.select(list(ends), [], [], 0.1)[0]
                for source in readable:
                    data = source.recv(CHUNK)
                    if not data:
                        return
                    ends[source].sendall(data)
        except (OSError, ValueError):
            return  # cut: the sockets were closed under it
        finally:
            for end in ends:
                _close(end)
            with self._lock, contextlib.suppress(ValueError):
                self._pairs.remove((client, server))


def _close(end: socket.socket) -> None:
    with contextlib.suppress(OSError):
        end.shutdown(socket.SHUT_RDWR)
    end.close()


@contextmanager
def cut_off(proxy: EngineProxy, *, silent: bool = False) -> Iterator[None]:
    """The Engine DB unreachable through ``proxy`` for the block's length."""
    proxy.cut(silent=silent)
    try:
        yield
    finally:
        proxy.restore()


@pytest.fixture
def engine_proxy(pg_fresh_url: str) -> Iterator[EngineProxy]:
    target = make_url(pg_fresh_url)
    proxy = EngineProxy((target.host or "127.0.0.1", target.port or 5432))
    yield proxy
    proxy.close()


@pytest.fixture
def proxied_project(
    engine_proxy: EngineProxy, pg_fresh_url: str, tmp_path: Path
) -> Iterator[ProjectOnDisk]:
    """A PostgreSQL project whose every Engine DB connection, the test's too, goes through
    ``engine_proxy``."""
    made = scripted_project(tmp_path / "etl-craft", engine_proxy.url(pg_fresh_url))
    yield made
    made.engine.dispose()
