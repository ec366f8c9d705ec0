"""Trace context from a run to its task processes' log records, without any network."""

from __future__ import annotations

import json
import signal
from typing import Any

import pytest

from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.overseer.test_server import pair_pipeline, run_status

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def attempt_logs(project: ProjectOnDisk) -> list[str]:
    return [log.read_text() for log in sorted((project.root / "logs").rglob("*.log"))]


def spans(output: str) -> list[dict[str, Any]]:
    """The spans the console exporter printed, one JSON object a line."""
    return [json.loads(line) for line in output.splitlines() if line.startswith('{"name"')]


def test_a_run_span_s_trace_id_reaches_every_attempt_log_of_the_run(
    sqlite_project: ProjectOnDisk, processes: Processes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    pair_pipeline(sqlite_project)
    server = processes.start(sqlite_project, "server", "--metrics-port", "0")
    run_id = sqlite_project.queued_run("pair")
    wait_for(lambda: run_status(sqlite_project, run_id) == "SUCCESS", "the run to succeed")
    server.send_signal(signal.SIGTERM)
    done = processes.finish(server)

    [run] = [span for span in spans(done.output) if span["name"] == "etl_craft.run"]
    assert run["attributes"]["etl_craft.run_id"] == run_id
    assert run["attributes"]["etl_craft.run.status"] == "SUCCESS"
    trace_id = run["context"]["trace_id"]
    attempts = [span for span in spans(done.output) if span["name"] == "etl_craft.attempt"]
    assert len(attempts) == 2
    assert {span["context"]["trace_id"] for span in attempts} == {trace_id}
    assert {span["parent_id"] for span in attempts} == {run["context"]["span_id"]}
    logs = attempt_logs(sqlite_project)
    assert len(logs) == 2
    for log in logs:
        lines = [line for line in log.splitlines() if " etl_craft.task: " in line]
        assert lines
        assert all(f"trace={trace_id.removeprefix('0x')}]" in line for line in lines)


def test_a_foreground_run_passes_its_own_traceparent_to_the_task_processes(
    sqlite_project: ProjectOnDisk, processes: Processes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACEPARENT", f"00-{TRACE_ID}-00f067aa0ba902b7-01")
    pair_pipeline(sqlite_project)

    done = processes.run(sqlite_project, "run", "--pipeline-code", "pair")

    assert done.code == 0, done.output
    logs = attempt_logs(sqlite_project)
    assert len(logs) == 2
    assert all(f"trace={TRACE_ID}]" in log for log in logs)
