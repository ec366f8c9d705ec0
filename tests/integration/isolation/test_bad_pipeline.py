"""A pipeline whose graph cannot be built stops nothing but itself: `run` refuses it before any
run exists, the server skips or leaves its runs and drives the others, and its runs can still
be read and cancelled once it is deactivated."""

from __future__ import annotations

import json

from etl_craft.core.errors import ExitCode
from tests.chaos.harness import rows
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.isolation.rings import CYCLE, ring_and_good, runs_of
from tests.integration.overseer.test_server import overseers, run_status


def test_run_of_a_cyclic_pipeline_refuses_naming_the_cycle_and_leaves_no_run(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    ring_and_good(chaos_project)

    done = processes.run(chaos_project, "run", "--pipeline_code", "ring")

    assert done.code == ExitCode.METADATA, done.output
    assert "pipeline ring cannot run" in done.output
    assert CYCLE in done.output
    assert "no run was created" in done.output
    assert runs_of(chaos_project, "ring") == []


def test_the_server_drives_a_good_pipeline_beside_a_cyclic_one_and_skips_its_queued_run(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    ring_and_good(chaos_project)
    # Left IN-PROGRESS as `run` used to leave it: the server once exited 4 at every start.
    stuck = chaos_project.new_run("ring", run_key="manual:stuck")
    queued = chaos_project.queued_run("ring", run_key="manual:queued")
    server = processes.start(chaos_project, "server", "--metrics-port", "0")
    wait_for(lambda: len(overseers(chaos_project)) == 1, "the server to take the lead")

    good = chaos_project.queued_run("good")
    wait_for(lambda: run_status(chaos_project, good) == "SUCCESS", "the good run to succeed")
    wait_for(lambda: run_status(chaos_project, queued) == "SKIPPED", "the queued ring run skipped")

    assert server.poll() is None
    assert run_status(chaos_project, stuck) == "IN-PROGRESS"
    ((_, message),) = [run for run in runs_of(chaos_project, "ring") if run[0] == "SKIPPED"]
    assert message is not None
    assert "pipeline ring cannot run" in message
    assert CYCLE in message
    attempts = rows(
        chaos_project,
        "SELECT count(*) FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
        "ON t.TASK_RUN_ID = a.TASK_RUN_ID WHERE t.PIPELINE_RUN_ID IN (:s, :q)",
        s=stuck,
        q=queued,
    )
    assert attempts == [(0,)]


def test_list_json_shows_the_blocking_finding_of_the_cyclic_pipeline_only(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    ring_and_good(chaos_project)

    done = processes.run(chaos_project, "--format", "json", "list")

    assert done.code == 0, done.output
    listed = {p["pipeline_code"]: p for p in json.loads(done.output)["pipelines"]}
    assert listed["good"]["blocking_findings"] == []
    (finding,) = listed["ring"]["blocking_findings"]
    assert (finding["check"], finding["severity"], finding["task_code"]) == ("cycle", "FAIL", None)
    assert finding["message"].startswith(CYCLE)


def test_cancel_and_history_reach_the_runs_of_a_deactivated_pipeline(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    ring_and_good(chaos_project)
    stuck = chaos_project.new_run("ring", run_key="manual:stuck")
    chaos_project.migrate(
        "0003_retire_ring.sql",
        "UPDATE CFG_PIPELINES SET ACTIVE_FLAG = 'N' WHERE PIPELINE_CODE = 'ring';",
    )

    cancelled = processes.run(
        chaos_project, "cancel", "--pipeline", "ring", "--run", str(stuck), "--reason", "x"
    )
    listed = processes.run(chaos_project, "--format", "json", "history", "--pipeline", "ring")

    assert cancelled.code == 0, cancelled.output
    assert run_status(chaos_project, stuck) == "CANCELLED"
    assert listed.code == 0, listed.output
    history = json.loads(listed.output)
    assert [(run["run_id"], run["status"]) for run in history["runs"]] == [(stuck, "CANCELLED")]
