"""Attempt logs in a Logs store: uploaded by their owner when the attempt ends, read from the
store on any host (through the API, the web UI and `etl-craft logs`), with TASK_LOG keeping a
tail of Logs.tail_bytes."""

from __future__ import annotations

import shutil
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from etl_craft.operations.access.api_tokens import TokenRequest, create_token
from etl_craft.operations.context import ContextRequest, OperationContext, build_context
from etl_craft.operations.logs.lines import whole_log
from etl_craft.operations.masking import secrets_redactor
from etl_craft.stores import StoreSettings, open_store
from etl_craft_api.app import create_app
from etl_craft_ui.app import create_app as create_ui_app
from tests.chaos.harness import rows
from tests.fixtures.metadata import TESTER
from tests.fixtures.processes import Processes, free_port
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.ui.conftest import settings_of, sign_in
from tests.integration.worker.queueing import (
    python_pipeline,
    queue_run,
    release,
    start_worker,
    status_of,
)

pytestmark = pytest.mark.postgres

# Prints where it runs and a long body (past the tail), then waits to be released.
TALKER = """
import os
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    print(f"attempt {context.attempt_id} ran on {os.environ['ETL_CRAFT_HOST_NAME']}")
    for number in range(400):
        print(f"body line {number:04d} " + "x" * 40)
    folder = Path(context.input_params["folder"])
    with (folder / "starts.log").open("a") as starts:
        starts.write(f"{context.attempt_id} {os.getpid()}\\n")
    while not (folder / "release-all").exists():
        time.sleep(0.05)
    print("the last line")
    return ScriptResult(row_count=1)
"""
TAIL_BYTES = 1024
WORKER_TOKEN = "worker-secret-for-tests"


def store_settings(store: StoreSettings) -> dict[str, str]:
    """The ETL_CRAFT_* settings of a process with no Logs section of its own."""
    assert store.endpoint_url is not None
    assert store.region is not None
    return {
        "logs_store": store.url,
        "store_endpoint_url": store.endpoint_url,
        "store_region": store.region,
    }


def succeeded(project: ProjectOnDisk, attempt_id: int) -> bool:
    return status_of(project, attempt_id) == "SUCCESS"


def host_copy(project: ProjectOnDisk, folder: Path) -> ProjectOnDisk:
    """The project's files as another host has them: its own folder, its own logs/."""
    shutil.copytree(project.root, folder, ignore=shutil.ignore_patterns("logs", "*.db"))
    return ProjectOnDisk(folder, project.connector, project.engine)


def test_two_workers_on_other_hosts_serve_then_upload_their_logs_read_through_the_api(
    pg_project: ProjectOnDisk,
    processes: Processes,
    s3_store: StoreSettings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = pg_project
    monkeypatch.setenv("ETL_CRAFT_WORKER_TOKEN", WORKER_TOKEN)
    (project.root / "ingestion_scripts" / "talker.py").write_text(TALKER)
    with project.config.open("a") as config:
        config.write(f"Logs:\n  tail_bytes: {TAIL_BYTES}\n")
    python_pipeline(
        project, "spread", ["one", "two"], script_of={"one": "talker.py", "two": "talker.py"}
    )
    hosts = {
        "host-a": host_copy(project, tmp_path / "a"),
        "host-b": host_copy(project, tmp_path / "b"),
    }
    for host, copy in hosts.items():
        settings = {**store_settings(s3_store), "host_name": host, "worker_token": WORKER_TOKEN}
        port = str(free_port())
        endpoint = ("--log-port", port, "--log-host", "127.0.0.1")
        address = ("--log-address", f"http://127.0.0.1:{port}")
        options = ("--ingestion-slots", "1", *endpoint, *address)
        start_worker(processes, copy, *options, settings=settings)
    queued = queue_run(project, "spread", ["one", "two"])

    # Each worker holds one attempt: two hosts, each writing a log the other can't see.
    def both_started() -> bool:
        log = project.root / "starts.log"
        return log.exists() and len(log.read_text().split()) == 4

    wait_for(both_started, "both attempts to start", 60)
    # The API of a third host: a Logs store, the worker token, no log file of either.
    with project.config.open("a") as config:
        config.write(
            f"  store: {s3_store.url}\n  endpoint_url: {s3_store.endpoint_url}\n"
            f"  region: {s3_store.region}\n"
        )
    ctx = build_context(ContextRequest(project.config))
    try:
        api = Reader(ctx)
        for attempt_id in queued.values():
            assert status_of(project, attempt_id) == "RUNNING"
            running = api.log(attempt_id)
            assert any(line.endswith(f"ran on {host_of(project, attempt_id)}") for line in running)
            assert "the last line" not in running
            page = api.page(attempt_id)
            assert f"ran on {host_of(project, attempt_id)}" in page
            assert "the last line" not in page
            assert "following the log" in page
        release(project)
        for attempt_id in queued.values():
            wait_for(partial(succeeded, project, attempt_id), "the attempt", 60)
        ended_logs_are_in_the_store(project, hosts, s3_store, api)
    finally:
        ctx.close()


def host_of(project: ProjectOnDisk, attempt_id: int) -> str:
    [(host,)] = rows(
        project, "SELECT HOST FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a", a=attempt_id
    )
    return str(host)


class Reader:
    """The API and web UI apps of a host that runs no attempt, with a viewer's token."""

    def __init__(self, ctx: OperationContext) -> None:
        self.ctx = ctx
        self.token = create_token(
            replace(ctx, actor=TESTER), TokenRequest("reader", "viewer", None)
        ).token
        self.client = TestClient(create_app(ctx))
        self.browser = TestClient(create_ui_app(ctx, settings_of()), follow_redirects=False)
        signed_in = sign_in(self.browser, self.token)
        assert signed_in.status_code == 303, signed_in.text

    def page(self, attempt_id: int) -> str:
        """The log as the attempt's page shows it: its log fragment, from the first byte."""
        answer = self.browser.get(f"/partials/attempts/{attempt_id}/log", params={"offset": 0})
        assert answer.status_code == 200, answer.text
        assert "not configured to read this log" not in answer.text
        return answer.text

    def log(self, attempt_id: int) -> list[str]:
        answer = self.client.get(
            f"/api/v1/attempts/{attempt_id}/log",
            headers={"Authorization": f"Bearer {self.token}"},
        )
        assert answer.status_code == 200, answer.text
        assert answer.headers["X-Next-Offset"] == str(len(answer.content))
        return answer.text.splitlines()


def ended_logs_are_in_the_store(
    project: ProjectOnDisk,
    hosts: dict[str, ProjectOnDisk],
    s3_store: StoreSettings,
    api: Reader,
) -> None:
    found = {
        int(attempt_id): (str(host), str(log_path), str(task_log))
        for attempt_id, host, log_path, task_log in rows(
            project, "SELECT ATTEMPT_ID, HOST, LOG_PATH, TASK_LOG FROM AUD_TASK_ATTEMPTS"
        )
    }
    assert {host for host, _, _ in found.values()} == set(hosts)
    for host, log_path, task_log in found.values():
        assert log_path.startswith(f"{s3_store.url}/logs/default.")
        assert "the last line\n" in task_log
        assert len(task_log.encode()) <= TAIL_BYTES
        assert "ran on" not in task_log  # the head is in the store only
        # Uploaded, the owner's copy is gone: no host keeps attempt logs.
        assert not list((hosts[host].root / "logs").rglob("*.log"))
    # The same API reads each ended log from the store now.
    for attempt_id, (host, _, _) in found.items():
        lines = api.log(attempt_id)
        assert f"attempt {attempt_id} ran on {host}" in lines
        assert "the last line" in lines
        assert sum(line.startswith("body line") for line in lines) == 400
        # etl-craft logs reads the same, and so does the web UI's attempt page.
        assert whole_log(api.ctx, attempt_id, secrets_redactor(api.ctx)).lines == lines
        page = api.page(attempt_id)
        assert f"attempt {attempt_id} ran on {host}" in page
        assert "the last line" in page
        assert "End of the log: the attempt ended SUCCESS" in page


def test_a_log_missing_from_the_store_says_where_its_tail_is(
    pg_project: ProjectOnDisk, processes: Processes, s3_store: StoreSettings, tmp_path: Path
) -> None:
    project = pg_project
    python_pipeline(project, "single", ["quick"])
    start_worker(processes, project, settings=store_settings(s3_store))
    [attempt_id] = queue_run(project, "single", ["quick"]).values()
    wait_for(lambda: status_of(project, attempt_id) == "SUCCESS", "the attempt", 60)
    [(log_path,)] = rows(project, "SELECT LOG_PATH FROM AUD_TASK_ATTEMPTS")
    store = open_store(s3_store, "Logs.store")
    store.delete(str(log_path).removeprefix(f"{store.url}/"))

    with project.config.open("a") as config:
        config.write(
            f"Logs:\n  store: {s3_store.url}\n  endpoint_url: {s3_store.endpoint_url}\n"
            f"  region: {s3_store.region}\n"
        )
    done = processes.run(project, "logs", "--attempt", str(attempt_id))
    assert done.code == 14, done.output
    assert "is not in the Logs store" in done.output
    assert "TASK_LOG" in done.output
