"""A live `etl-craft api` process, at its default log level: a huge body sent without a token is
refused (413) without being read, whether declared by Content-Length or streamed chunked; the
answer names no server; and the access log has a line per request, with no token in it."""

from __future__ import annotations

import http.client
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures.processes import BIN, clean_env, free_port, stop, wait_until_up
from tests.fixtures.waiting import wait_for
from tests.integration.api.conftest import Api

pytestmark = pytest.mark.e2e

MIB = 1024 * 1024
HUGE_BODY = 300 * MIB
MAX_RSS_GROWTH = 20 * MIB
CHUNK = bytes(MIB)  # one buffer sent again and again: the test never holds the whole body


@dataclass
class Live:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    def rss(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        [line] = [line for line in status.splitlines() if line.startswith("VmRSS:")]
        return int(line.split()[1]) * 1024

    def send(
        self, path: str, body: Iterator[bytes] | bytes, headers: dict[str, str]
    ) -> tuple[http.client.HTTPResponse, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            chunked = "Content-Length" not in headers
            conn.request("POST", path, body=body, headers=headers, encode_chunked=chunked)
            answer = conn.getresponse()
            return answer, answer.read()
        finally:
            conn.close()

    def wait_for_log(self, text: str, timeout: float = 30) -> str:
        def showing() -> str | None:
            found = self.log.read_text()
            return found if text in found else None

        try:
            return wait_for(showing, f"the API's log to show {text!r}", timeout)
        except AssertionError as timed_out:
            raise AssertionError(f"{timed_out}:\n{self.log.read_text()[-3000:]}") from None


@pytest.fixture(scope="module")
def live(api: Api, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    port, log = free_port(), tmp_path_factory.mktemp("live") / "api.out"
    command = [str(BIN / "etl-craft"), "--config", str(api.project.config), "api"]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*command, "--port", str(port)],
            cwd=api.project.root,
            env=clean_env(ETL_CRAFT_ACTOR="live@tests"),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", process)
        yield Live(process, port, log)
    finally:
        stop(process)


def _huge() -> Iterator[bytes]:
    for _ in range(HUGE_BODY // MIB):
        yield CHUNK


def _warmed(live: Live) -> int:
    """The process's RSS once it has answered a few requests with small bodies."""
    for _ in range(3):
        live.send("/api/v1/pipelines/orders/runs", b"{}", {"Content-Length": "2"})
    return live.rss()


def test_a_declared_300_mib_body_without_a_token_is_refused_unread(live: Live) -> None:
    before = _warmed(live)

    answer, body = live.send(
        "/api/v1/pipelines/orders/runs",
        _huge(),
        {"Content-Type": "application/json", "Content-Length": str(HUGE_BODY)},
    )

    grown = live.rss() - before
    assert answer.status == 413, body[:500]
    assert answer.getheader("content-type") == "application/problem+json"
    assert str(HUGE_BODY) in json.loads(body)["detail"]
    assert grown < MAX_RSS_GROWTH, f"the API grew by {grown / MIB:.1f} MiB"


def test_a_streamed_300_mib_body_without_a_token_is_cut_at_the_limit(live: Live) -> None:
    before = _warmed(live)

    answer, body = live.send(
        "/api/v1/pipelines/orders/runs", _huge(), {"Content-Type": "application/json"}
    )

    grown = live.rss() - before
    assert answer.status == 413, body[:500]
    assert json.loads(body)["status"] == 413
    assert grown < MAX_RSS_GROWTH, f"the API grew by {grown / MIB:.1f} MiB"


def test_the_answer_names_no_server_and_the_access_log_holds_no_token(live: Live, api: Api) -> None:
    token = api.tokens["viewer"]
    conn = http.client.HTTPConnection("127.0.0.1", live.port, timeout=30)
    try:
        conn.request("GET", f"/api/v1/pipelines?token={token}", headers={"X-Probe": "1"})
        answer = conn.getresponse()
        answer.read()
    finally:
        conn.close()

    logged = live.wait_for_log('"GET /api/v1/pipelines?token=***" 422 ')
    assert answer.getheader("server") is None
    assert answer.getheader("cache-control") == "no-store"
    assert answer.getheader("date")
    assert token not in logged
    assert "by anonymous" in logged
