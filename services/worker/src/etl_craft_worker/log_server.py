"""The worker's internal endpoint: the logs of the attempts it runs, read from another host.

``GET /attempts/<id>/log?start=S&end=E`` answers the bytes of the log from S to E (E past the
end: to the end) and its size in X-Log-Size, to a caller presenting the worker token as a
bearer token; an attempt this worker does not run is 404, so its reader looks elsewhere (the
Logs store, once the attempt ended). It serves files and nothing else: no Engine DB access.
"""

from __future__ import annotations

import hmac
import logging
import re
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from etl_craft.operations.logs.sources import SIZE_HEADER

BEARER_PREFIX = "Bearer "
ROUTE = re.compile(r"/attempts/(\d{1,19})/log")
log = logging.getLogger(__name__)

LogPath = Callable[[int], Path | None]  # the log file of an attempt this worker runs


class LogServer:
    def __init__(self, host: str, port: int, token: str, log_path: LogPath) -> None:
        handler = _handler(token, log_path)
        self.server = ThreadingHTTPServer((host, port), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, name="worker-logs", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(token: str, log_path: LogPath) -> type[BaseHTTPRequestHandler]:
    expected = f"{BEARER_PREFIX}{token}".encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            presented = self.headers.get("Authorization", "").encode()
            if not hmac.compare_digest(presented, expected):
                self._refuse(HTTPStatus.UNAUTHORIZED, "present the worker token as a bearer token")
                return
            parts = urlsplit(self.path)
            matched = ROUTE.fullmatch(parts.path)
            path = log_path(int(matched.group(1))) if matched else None
            if path is None or not path.is_file():
                self._refuse(HTTPStatus.NOT_FOUND, "this worker runs no such attempt")
                return
            query = parse_qs(parts.query)
            try:
                start = int(query.get("start", ["0"])[0])
                end = int(query.get("end", [str(2**62)])[0])
            except ValueError:
                self._refuse(HTTPStatus.BAD_REQUEST, "start and end are byte offsets")
                return
            with path.open("rb") as handle:
                size = handle.seek(0, 2)
                handle.seek(min(max(start, 0), size))
                data = handle.read(max(0, min(end, size) - start))
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header(SIZE_HEADER, str(size))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _refuse(self, status: HTTPStatus, why: str) -> None:
            body = why.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            log.debug("log request: " + format, *args)

    return Handler
