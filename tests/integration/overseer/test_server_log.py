"""At the default log level, the server says what it does to runs: one line per admitted run
and one per ended run."""

from __future__ import annotations

import signal

from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.overseer.test_server import overseers, pair_pipeline, run_status


def test_the_server_logs_each_admitted_and_ended_run_once(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    pair_pipeline(chaos_project)
    server = processes.start(chaos_project, "server")  # --log-level stays at its default
    wait_for(lambda: len(overseers(chaos_project)) == 1, "the server to take the lead")
    run_id = chaos_project.queued_run("pair")
    wait_for(lambda: run_status(chaos_project, run_id) == "SUCCESS", "the run to succeed")
    server.send_signal(signal.SIGTERM)
    lines = processes.finish(server).output.splitlines()
    admitted = [line for line in lines if f"run {run_id} admitted as IN-PROGRESS" in line]
    ended = [line for line in lines if f"run {run_id} of pair ended SUCCESS" in line]
    assert len(admitted) == 1, lines
    assert len(ended) == 1, lines
    assert " INFO " in admitted[0]
