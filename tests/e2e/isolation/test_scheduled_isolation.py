"""A server with a cyclic pipeline and a good one, both on a one-minute schedule: the good one
runs tick after tick while the cyclic one is reported, never admitted, and stops nothing."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.chaos.harness import rows
from tests.fixtures.processes import Processes, free_port, process_env
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.isolation.rings import CYCLE, ring_and_good, runs_of
from tests.integration.observability.scraping import until

REPOSITORY = Path(__file__).resolve().parents[3]
# A minute passes every two seconds: two ticks of `* * * * *` without two real minutes.
SPEED = 30
FAST_SERVER = (sys.executable, "-m", "tests.e2e.isolation.fast_clock", str(SPEED), "server")


def start_fast_server(processes: Processes, project: ProjectOnDisk, port: int) -> None:
    env = process_env()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY), env.get("PYTHONPATH")]))
    processes.spawn(project, [*FAST_SERVER, "--metrics-port", str(port)], env)


def scheduled_successes(project: ProjectOnDisk) -> int:
    found = rows(
        project,
        "SELECT count(*) FROM AUD_PIPELINES_RUN_LOG r JOIN CFG_PIPELINES p "
        "ON p.PIPELINE_ID = r.PIPELINE_ID WHERE p.PIPELINE_CODE = 'good' "
        "AND r.TRIGGER_KIND = 'SCHEDULE' AND r.STATUS = 'SUCCESS'",
    )
    return int(found[0][0])


def test_a_server_runs_the_good_pipeline_twice_while_the_cyclic_one_shows_its_finding(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    ring_and_good(chaos_project, schedule="* * * * *")
    port = free_port()
    start_fast_server(processes, chaos_project, port)

    wait_for(lambda: scheduled_successes(chaos_project) >= 2, "two scheduled good runs", 120)
    listed = processes.run(chaos_project, "--format", "json", "list")
    scrape = until(
        port,
        lambda s: (
            s.value("etl_craft_pipeline_blocking_findings", project="default", pipeline="ring")
            is not None
        ),
        "the blocking-findings series of ring",
    )

    assert processes.started[0].poll() is None, "the server stopped"
    assert listed.code == 0, listed.output
    pipelines = {p["pipeline_code"]: p for p in json.loads(listed.output)["pipelines"]}
    assert pipelines["good"]["blocking_findings"] == []
    assert [f["check"] for f in pipelines["ring"]["blocking_findings"]] == ["cycle"]
    assert (
        scrape.value("etl_craft_pipeline_blocking_findings", project="default", pipeline="ring")
        == 1
    )
    assert (
        scrape.value("etl_craft_pipeline_blocking_findings", project="default", pipeline="good")
        is None
    )
    # Ring's ticks became runs skipped with its finding (or as missed before the server
    # started); none was admitted, none ran a task. The server goes on ticking while this
    # reads, so the newest tick's run may still be QUEUED, not judged yet.
    ring = runs_of(chaos_project, "ring")
    assert {status for status, _ in ring} <= {"SKIPPED", "QUEUED"}, ring
    assert any(status == "SKIPPED" for status, _ in ring), ring
    assert any(message is not None and CYCLE in message for _, message in ring), ring
    ring_attempts = rows(
        chaos_project,
        "SELECT count(*) FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
        "ON t.TASK_RUN_ID = a.TASK_RUN_ID JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE k.TASK_CODE IN ('east', 'west')",
    )
    assert ring_attempts == [(0,)]
