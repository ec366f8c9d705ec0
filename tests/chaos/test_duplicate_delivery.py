"""Two deliveries of one task at once: exactly one attempt runs, one warehouse batch lands."""

from __future__ import annotations

from tests.chaos.harness import (
    APPENDED,
    LOADS,
    attempts,
    live_attempts,
    refused_as_ended,
    warehouse_rows,
)
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk

KEY = "manual:delivered-twice"


def test_two_deliveries_of_one_task_run_it_once(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    chaos_project.migrate("0001_loads.sql", LOADS)
    setup = processes.run(
        chaos_project, "run", "--pipeline_code", "loads", "--run-key", KEY, "--task_code", "setup"
    )
    assert setup.code == 0, setup.output
    deliver = ("run", "--pipeline_code", "loads", "--run-key", KEY, "--task_code", "append")
    first, second = (processes.start(chaos_project, *deliver) for _ in range(2))
    done = sorted((processes.finish(first), processes.finish(second)), key=lambda d: d.code)

    assert done[0].code == 0, done[0].output
    # The loser either found the run supervised, or found it ended by the winner.
    assert "is supervised by" in done[1].output or refused_as_ended(done[1]), done[1].output
    assert attempts(chaos_project, "append") == [(1, "SUCCESS", "CHILD")]
    assert live_attempts(chaos_project) == 0
    assert warehouse_rows(chaos_project) == APPENDED
