"""kill -9 at each fault point of the owner and of the task process, through the real CLI.

The owner (etl-craft run) dies at a boundary; the next etl-craft run, once the dead owner's
leases have expired, reconciles and finishes the run. A task process that dies leaves its
attempt FAILED, or SUCCESS when its writes committed, never live for good. The target holds
each appended row once.
"""

from __future__ import annotations

import pytest

from tests.chaos.harness import (
    APPENDED,
    LOADS,
    attempts,
    leases_expired,
    live_attempts,
    refused_as_ended,
    run_statuses,
    scalar,
    warehouse_rows,
)
from tests.fixtures.processes import Processes, task_processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

KEY = "manual:chaos"
RUN = ("run", "--pipeline_code", "loads", "--run-key", KEY)


def setup_done(project: ProjectOnDisk) -> int:
    """A run whose table exists: the faults below hit the append task's attempt."""
    project.migrate("0001_loads.sql", LOADS)
    run_id = project.new_run("loads", KEY)
    setup = frozenset({_task_id(project, "setup")})
    project.supervisor().supervise(run_id, setup)
    assert attempts(project, "setup") == [(1, "SUCCESS", "CHILD")]
    return run_id


def _task_id(project: ProjectOnDisk, code: str) -> int:
    return int(scalar(project, "SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = :c", c=code))


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ("after_claim", [(1, "LOST", "RECONCILER"), (2, "SUCCESS", "CHILD")]),
        # Started, its claim not committed: the claim never happened, the process never ran.
        ("before_running", [(1, "SUCCESS", "CHILD")]),
        ("after_launch", [(1, "SUCCESS", "CHILD")]),
        ("after_finalize", [(1, "SUCCESS", "CHILD")]),
    ],
)
def test_the_owner_killed_at_a_fault_point_is_reconciled_by_the_next_run(
    chaos_project: ProjectOnDisk,
    processes: Processes,
    point: str,
    expected: list[tuple[int, str, str]],
) -> None:
    setup_done(chaos_project)
    killed = processes.run(chaos_project, *RUN, fault=f"{point}:kill")
    assert killed.code == -9, killed.output
    wait_for(lambda: leases_expired(chaos_project), "the dead owner's leases to expire")
    # A task process launched before the kill outlives its owner and records its own outcome.
    wait_for(lambda: not task_processes({chaos_project.root}), "the orphaned task process")
    again = processes.run(chaos_project, *RUN)

    if point == "after_finalize":
        assert refused_as_ended(again), again.output
    else:
        assert again.code == 0, again.output
    assert run_statuses(chaos_project) == ["SUCCESS"]
    assert attempts(chaos_project, "append") == expected
    assert live_attempts(chaos_project) == 0
    assert warehouse_rows(chaos_project) == APPENDED


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ("child_before_report", [(1, "SUCCESS", "LEDGER")]),
        ("child_after_report", [(1, "SUCCESS", "CHILD")]),
    ],
)
def test_a_task_process_killed_after_its_commit_is_not_retried(
    chaos_project: ProjectOnDisk,
    processes: Processes,
    point: str,
    expected: list[tuple[int, str, str]],
) -> None:
    setup_done(chaos_project)
    done = processes.run(chaos_project, *RUN, fault=f"{point}:kill")

    assert done.code == 0, done.output
    assert run_statuses(chaos_project) == ["SUCCESS"]
    assert attempts(chaos_project, "append") == expected
    assert live_attempts(chaos_project) == 0
    assert warehouse_rows(chaos_project) == APPENDED


def test_a_task_process_killed_at_its_start_fails_each_attempt_and_a_rerun_finishes(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    run_id = setup_done(chaos_project)
    done = processes.run(chaos_project, *RUN, fault="child_started:kill")

    assert done.code != 0, done.output
    assert run_statuses(chaos_project) == ["FAILED"]
    assert attempts(chaos_project, "append") == [(n, "FAILED", "OWNER") for n in (1, 2, 3)]
    assert live_attempts(chaos_project) == 0
    assert warehouse_rows(chaos_project) == []
    rerun = processes.run(
        chaos_project,
        "run",
        "--pipeline_code",
        "loads",
        "--run-id",
        str(run_id),
        "--rerun",
        "--task_code",
        "append",
        "--reason",
        "the task process was killed",
    )
    assert rerun.code == 0, rerun.output
    assert run_statuses(chaos_project) == ["SUCCESS"]
    assert attempts(chaos_project, "append")[-1] == (4, "SUCCESS", "CHILD")
    assert warehouse_rows(chaos_project) == APPENDED
