"""Live by push: GET /events streams the Engine DB's changes to a signed-in page.

On PostgreSQL the UI (uvicorn serving the app, in a thread, on a free port) holds one LISTEN and
tells each open stream of every transition: a run's change reaches a browser within a second
of its commit; a client that does not read loses its oldest changes, not the others theirs; a
quiet stream beats, and ends with its session. On SQLite there is nothing to tell: /events
answers 204 and pages poll.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import uvicorn

from etl_craft.operations.changes import Change
from etl_craft.operations.interventions.actions import cancel
from etl_craft.operations.runs.triggers import TriggerRequest, trigger_run
from etl_craft_ui.live import QUEUE_SIZE, Broadcaster, Changes
from etl_craft_ui.pages import events
from etl_craft_ui.sessions import SESSION_COOKIE
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.processes import BIN, clean_env, free_port, wait_until_up
from tests.fixtures.waiting import wait_for
from tests.integration.ui.conftest import SECRET_KEY, Ui, csrf_of, sign_in

ON_POSTGRESQL = pytest.mark.parametrize("ui", ["postgresql"], indirect=True)
LATENCY_BOUND = 1.0  # seconds from a commit to its event in the browser's stream


@dataclass(frozen=True)
class Served:
    host: str
    port: int


@pytest.fixture(scope="module")
def served(ui: Ui) -> Iterator[Served]:
    """The module's UI app served over real HTTP by uvicorn, lifespan included."""
    port = free_port()
    config = uvicorn.Config(
        ui.app, host="127.0.0.1", port=port, log_config=None, timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="ui under test", daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started, "uvicorn to serve the UI", timeout=30)
        yield Served("127.0.0.1", port)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@dataclass(frozen=True)
class Frame:
    event: str
    data: dict[str, object]
    arrived: float  # time.monotonic() when its last line was read


class EventStream:
    """A browser's EventSource, read by hand: frames, each with when it arrived."""

    def __init__(self, served: Served, cookie: str | None) -> None:
        self.connection = http.client.HTTPConnection(served.host, served.port, timeout=30)
        headers = {"Accept": "text/event-stream"}
        if cookie is not None:
            headers["Cookie"] = f"{SESSION_COOKIE}={cookie}"
        self.connection.request("GET", "/events", headers=headers)
        self.answer = self.connection.getresponse()

    def lines_until_blank(self, deadline: float) -> list[str]:
        lines: list[str] = []
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no whole frame before the deadline; read so far: {lines}"
            assert self.connection.sock is not None
            self.connection.sock.settimeout(left)
            raw = self.answer.readline()
            assert raw, f"the stream ended; read so far: {lines}"
            line = raw.decode().rstrip("\r\n")
            if not line and lines:
                return lines
            if line:
                lines.append(line)

    def frame_naming(self, kind: str, row_id: int, status: str, deadline: float) -> Frame:
        """The first event of ``kind`` about row ``row_id`` now ``status``; others are skipped."""
        while True:
            lines = self.lines_until_blank(deadline)
            arrived = time.monotonic()
            fields = dict(line.split(": ", 1) for line in lines if not line.startswith(":"))
            if fields.get("event") != kind:
                continue
            data = json.loads(fields["data"])
            if data == {"id": row_id, "status": status}:
                return Frame(kind, data, arrived)

    def lines_until_the_end(self, deadline: float) -> list[str]:
        """What the stream says until it ends (its final chunk), which must be by ``deadline``."""
        lines: list[str] = []
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"the stream goes on past the deadline; read so far: {lines}"
            assert self.connection.sock is not None
            self.connection.sock.settimeout(left)
            raw = self.answer.readline()
            if not raw:
                return lines
            lines.append(raw.decode().rstrip("\r\n"))

    def close(self) -> None:
        self.connection.close()


@ON_POSTGRESQL
def test_a_cancelled_run_reaches_an_open_event_stream_within_a_second_of_its_commit(
    ui: Ui, served: Served
) -> None:
    ui.end_live_runs()
    stream = EventStream(served, ui.client("viewer").cookies.get(SESSION_COOKIE))
    try:
        assert stream.answer.status == 200
        assert stream.answer.getheader("content-type", "").startswith("text/event-stream")
        # Its first lines come once the UI listens: whatever commits from now on is told.
        assert "retry: 3000" in stream.lines_until_blank(time.monotonic() + 10)

        run = trigger_run(ui.tester, TriggerRequest("orders", run_key="pushed-1"))
        stream.frame_naming("run", run.run_id, "QUEUED", time.monotonic() + 10)

        committing = time.monotonic()  # before the call: the bound holds from the commit on
        cancel(ui.tester, "orders", run.run_id, "the test cancels it to see the event")
        told = stream.frame_naming("run", run.run_id, "CANCELLED", committing + LATENCY_BOUND)
    finally:
        stream.close()
    assert told.arrived - committing < LATENCY_BOUND


@ON_POSTGRESQL
def test_the_event_stream_refuses_a_client_without_a_session(ui: Ui, served: Served) -> None:
    stream = EventStream(served, cookie=None)
    try:
        assert stream.answer.status == 401
        assert stream.answer.getheader("content-type", "").startswith("text/html")
        assert "sign in" in stream.answer.read().decode()
    finally:
        stream.close()
    forged = EventStream(served, cookie="not-a-session-this-ui-signed")
    try:
        assert forged.answer.status == 401
    finally:
        forged.close()


@ON_POSTGRESQL
def test_a_quiet_stream_beats_and_ends_once_its_session_is_signed_out(
    ui: Ui, served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(events, "HEARTBEAT_SECONDS", 0.2)
    browser = ui.browser()
    assert sign_in(browser, ui.tokens["viewer"]).status_code == 303
    stream = EventStream(served, browser.cookies.get(SESSION_COOKIE))
    try:
        stream.lines_until_blank(time.monotonic() + 10)  # listening
        assert stream.lines_until_blank(time.monotonic() + 10) == [": heartbeat"]
        signed_out = browser.post("/sign-out", data={"csrf_token": csrf_of(browser.get("/"))})
        assert signed_out.status_code == 303
        said = stream.lines_until_the_end(time.monotonic() + 10)
    finally:
        stream.close()
        browser.close()
    assert set(said) <= {": heartbeat", ""}


def test_pages_follow_pushed_changes_on_postgresql_and_poll_on_sqlite(ui: Ui) -> None:
    page = ui.get("viewer", "/runs").text
    if ui.project.engine.dialect == "postgresql":
        assert 'data-events="/events"' in page
        assert 'hx-trigger="etl-craft:changed, every 30s"' in page  # a safety net only
    else:
        assert "data-events" not in page
        assert 'hx-trigger="etl-craft:changed, every 2s"' in page
        answer = ui.get("viewer", "/events")
        assert answer.status_code == 204  # an EventSource does not come back after it
    assert ui.browser().get("/events").status_code == 401


@ON_POSTGRESQL
def test_a_client_that_does_not_read_loses_its_oldest_changes_and_holds_no_one_up(
    ui: Ui,
) -> None:
    burst = QUEUE_SIZE + 50

    def notify_runs(ids: range) -> None:  # as transitions do: one payload per run, one commit
        with ui.project.engine.transaction(TESTER) as conn:
            for run_id in ids:
                payload = json.dumps({"type": "run", "id": run_id, "status": "QUEUED"})
                execute(conn, "SELECT pg_notify('etl_craft_events', :payload)", payload=payload)

    async def told(changes: Changes, run_id: int) -> None:
        while getattr(await asyncio.wait_for(changes.get(), 10), "row_id", None) != run_id:
            pass

    async def fan_out() -> tuple[list[Change | None], list[Change | None]]:
        live = Broadcaster(ui.ctx)
        try:
            slow, other = await live.subscribe(), await live.subscribe()
            await asyncio.to_thread(notify_runs, range(1, burst + 1))
            await told(other, burst)
            after_burst = [slow.get_nowait() for _ in range(slow.qsize())]
            for change in after_burst:
                slow.put_nowait(change)
            await asyncio.to_thread(notify_runs, range(burst + 1, burst + 2))
            await told(other, burst + 1)  # a full queue elsewhere holds no one up
            return after_burst, [slow.get_nowait() for _ in range(slow.qsize())]
        finally:
            live.close()

    after_burst, after_one_more = asyncio.run(fan_out())

    assert [getattr(change, "row_id", None) for change in after_burst] == list(
        range(burst - QUEUE_SIZE + 1, burst + 1)
    )
    assert [getattr(change, "row_id", None) for change in after_one_more] == list(
        range(burst - QUEUE_SIZE + 2, burst + 2)
    )


@ON_POSTGRESQL
@pytest.mark.e2e
def test_etl_craft_ui_asked_to_stop_ends_its_open_streams_at_once(
    ui: Ui, tmp_path_factory: pytest.TempPathFactory
) -> None:
    port = free_port()
    env = clean_env(ETL_CRAFT_UI_SECRET=SECRET_KEY, ETL_CRAFT_UI_PORT=str(port))
    said = tmp_path_factory.mktemp("stopping-ui") / "ui.out"
    with said.open("wb") as sink:
        process = subprocess.Popen(
            [str(BIN / "etl-craft-ui")], cwd=ui.project.root, env=env, stdout=sink, stderr=sink
        )
    stream: EventStream | None = None
    try:
        wait_until_up(f"http://127.0.0.1:{port}", process)
        stream = EventStream(
            Served("127.0.0.1", port), ui.client("viewer").cookies.get(SESSION_COOKIE)
        )
        stream.lines_until_blank(time.monotonic() + 10)  # listening
        process.terminate()
        assert stream.lines_until_the_end(time.monotonic() + 10) == []
        process.wait(timeout=30)
    finally:
        if stream is not None:
            stream.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    # Not cut off by uvicorn's grace: the stream ended as the server began to stop.
    assert "timeout graceful shutdown exceeded" not in said.read_text()
