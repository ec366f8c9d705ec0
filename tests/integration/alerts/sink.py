"""A real HTTP server on loopback that keeps every alert posted to it and answers each with the
next status of a script (200 once the script is spent)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    answered: int

    @property
    def document(self) -> Any:
        return json.loads(self.body)


@dataclass
class Sink:
    url: str
    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, path: str, headers: dict[str, str], body: bytes) -> int:
        with self.lock:
            status = self.statuses.pop(0) if self.statuses else 200
            self.received.append(Received(path, headers, body, status))
        return status

    def accepted(self, path: str) -> list[Received]:
        with self.lock:
            return [item for item in self.received if item.path == path and item.answered == 200]


@contextmanager
def sink() -> Iterator[Sink]:
    made: list[Sink] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status = made[0].take(self.path, dict(self.headers.items()), body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the test reads what was received, not the server's access log

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    made.append(Sink(f"http://127.0.0.1:{server.server_address[1]}"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield made[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
