"""The worker's log endpoint: the running attempts' log bytes, to a holder of the worker token
only; the reader's side turns its answers into a log source."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.core.errors import ConfigurationError, NotFoundError
from etl_craft.operations.logs.sources import WorkerLog
from etl_craft_worker.log_server import LogServer

TOKEN = "the-worker-token"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "load.attempt-1.log"
    log.write_bytes(b"first line\nsecond line\n")
    server = LogServer("127.0.0.1", 0, TOKEN, {7: log}.get)
    server.start()
    try:
        yield f"http://127.0.0.1:{server.port}", log
    finally:
        server.stop()


def status(url: str, token: str | None) -> int:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code


def test_only_the_worker_token_reads_a_running_attempts_log(served: tuple[str, Path]) -> None:
    endpoint, log = served
    url = f"{endpoint}/attempts/7/log"
    assert status(url, None) == 401
    assert status(url, "another-token") == 401
    assert status(url, TOKEN) == 200
    assert status(f"{endpoint}/attempts/8/log", TOKEN) == 404

    source = WorkerLog(endpoint, 7, TOKEN)
    assert source.size() == len(log.read_bytes())
    assert source.read(6, 16) == b"line\nsecon"
    with log.open("ab") as more:
        more.write(b"third line\n")
    assert source.read(23, 1000) == b"third line\n"


def test_a_reader_without_the_token_is_told_to_set_it(served: tuple[str, Path]) -> None:
    endpoint, _ = served
    with pytest.raises(ConfigurationError, match="ETL_CRAFT_WORKER_TOKEN"):
        WorkerLog(endpoint, 7, "wrong").size()
    with pytest.raises(NotFoundError, match="no longer runs attempt 8"):
        WorkerLog(endpoint, 8, TOKEN).size()
