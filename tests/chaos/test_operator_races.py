"""Operators acting on a live run from another process: refusals that change nothing.

Cancel and pause/resume of a live run through real processes are in
tests/integration/control (test_cancel, test_pause_and_audit).
"""

from __future__ import annotations

from pathlib import Path

from etl_craft.core.errors import ExitCode
from tests.chaos.harness import attempts, held_pipeline, live_attempts, rows, run_statuses, scalar
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for


def test_mark_and_rerun_of_a_running_task_are_refused_and_change_nothing(
    chaos_project: ProjectOnDisk, processes: Processes, tmp_path: Path
) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    held_pipeline(chaos_project, started, release)
    owner = processes.start(chaos_project, "run", "--pipeline_code", "held")
    wait_for(started.exists, "the task to run")
    run_id = str(scalar(chaos_project, "SELECT PIPELINE_RUN_ID FROM AUD_PIPELINES_RUN_LOG"))
    held = ("--pipeline_code", "held", "--run-id", run_id)
    reason = ("--reason", "looks done")

    task = processes.run(
        chaos_project, "mark", *held, "--task_code", "pull", "--status", "SUCCESS", *reason
    )
    whole = processes.run(chaos_project, "mark", *held, "--status", "FAILED", *reason)
    rerun = processes.run(chaos_project, "run", *held, "--rerun", "--task_code", "pull", *reason)
    release.write_text("go")
    ran = processes.finish(owner)

    for refused in (task, whole):
        assert refused.code == ExitCode.RUN_STATE, refused.output
        assert "attempt 1 RUNNING owned by" in refused.output, refused.output
    assert rerun.code == ExitCode.RUN_STATE, rerun.output
    assert "is supervised by" in rerun.output, rerun.output
    assert ran.code == 0, ran.output
    assert run_statuses(chaos_project) == ["SUCCESS"]
    assert attempts(chaos_project, "pull") == [(1, "SUCCESS", "CHILD")]
    assert live_attempts(chaos_project) == 0
    assert rows(chaos_project, "SELECT KIND FROM AUD_RUN_INTERVENTIONS") == []
