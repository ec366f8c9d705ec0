"""A worker whose Engine DB goes silent (its traffic stops at a proxy that neither forwards nor
closes: no reset, no error) stops its task process before the attempt's lease runs out, every
time, and says truthfully when it stopped relative to the lease.

The test reads the Engine DB directly, around the proxy; only the worker's connections go
through it. Each trial runs one held attempt, freezes the worker's traffic, notes the moment
the task process is gone, and compares it with the lease the Engine DB last granted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.chaos.harness import rows
from tests.chaos.proxy import EngineProxy
from tests.fixtures.processes import Processes, scripted_project
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.worker.queueing import (
    python_pipeline,
    queue_run,
    start_worker,
    starts,
    status_of,
)
from tests.integration.worker.test_worker_ownership import alive

pytestmark = pytest.mark.postgres
TRIALS = 10
LEASE = {"lease_seconds": "10", "heartbeat_seconds": "2"}


def test_a_worker_cut_off_silently_stops_its_task_before_the_lease_runs_out_every_time(
    pg_fresh_url: str, tmp_path: Path, processes: Processes
) -> None:
    target = make_url(pg_fresh_url)
    proxy = EngineProxy((target.host or "127.0.0.1", target.port or 5432))
    project = scripted_project(tmp_path / "etl-craft", pg_fresh_url)
    try:
        pipelines = [f"held{trial}" for trial in range(TRIALS)]
        for code in pipelines:
            python_pipeline(project, code, [f"wait_{code}"])
        worker, _ = start_worker(
            processes,
            project,
            "--ingestion-slots",
            "1",
            "--warehouse-slots",
            "0",
            "--heartbeat-seconds",
            LEASE["heartbeat_seconds"],
            "--metrics-port",
            "0",
            settings={**LEASE, "engine_url": proxy.url(pg_fresh_url)},
        )
        margins = [_trial(project, proxy, code, trial) for trial, code in enumerate(pipelines)]
        assert worker.poll() is None
    finally:
        proxy.close()
        project.engine.dispose()
    assert all(margin > 0 for margin in margins), margins
    output = (processes.folder / "etl-craft-0.out").read_text()
    stops = [
        line for line in output.splitlines() if "ERROR etl_craft.runtime.attempt_owner" in line
    ]
    assert len(stops) == TRIALS, output
    assert all("s before the lease ran out" in line for line in stops), stops
    assert "after the lease had run out" not in output


def _trial(project: ProjectOnDisk, proxy: EngineProxy, pipeline: str, trial: int) -> float:
    """Seconds between the task process's end and the lease's, the Engine DB's clock."""
    attempt_id = queue_run(project, pipeline, [f"wait_{pipeline}"])[f"wait_{pipeline}"]
    pid = wait_for(lambda: _pid_of(project, attempt_id), f"attempt {attempt_id} to start")
    proxy.freeze()
    try:
        gone = wait_for(
            lambda: None if alive(pid) else datetime.now(UTC), "the task to stop", 30, every=0.02
        )
        # What the Engine DB holds (a renewal it committed but whose answer was frozen counts).
        [(expires,)] = rows(
            project,
            "SELECT LEASE_EXPIRES_AT FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a",
            a=attempt_id,
        )
    finally:
        proxy.restore()
    wait_for(lambda: status_of(project, attempt_id) == "FAILED", "the worker to record it", 60)
    return float((expires - gone).total_seconds())


def _pid_of(project: ProjectOnDisk, attempt_id: int) -> int | None:
    return next((pid for attempt, pid in starts(project) if attempt == attempt_id), None)
