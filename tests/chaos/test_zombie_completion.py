"""A zombie: a task process whose owner was declared lost finishes later and changes nothing.

The reconciler stops an orphaned task process it can see on its own host. One on another
host it can't see, so the test records the first attempt's process as running elsewhere
(the only simulated part); everything else is real: the owner gets SIGKILL, its leases
expire, the next etl-craft run reconciles the attempt LOST and retries it, and only then
does the original task process finish and try to report.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from tests.chaos.harness import (
    attempts,
    held_pipeline,
    leases_expired,
    live_attempts,
    rows,
    run_statuses,
    scalar,
)
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

RUN = ("run", "--pipeline_code", "held", "--run-key", "manual:zombie")


def test_a_zombie_report_is_refused_and_changes_nothing(
    chaos_project: ProjectOnDisk, processes: Processes, tmp_path: Path
) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    held_pipeline(chaos_project, started, release)
    owner = processes.start(chaos_project, *RUN)
    wait_for(started.exists, "the first attempt to start its script")
    zombie = int(started.read_text())
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    # An owner stops at once what it no longer owns, and never a healthy attempt of its own:
    # dead, it can stop nothing more, and its task process runs on alone.
    assert _alive(zombie), "the owner stopped its healthy task process before it died"
    with chaos_project.engine.transaction(TESTER) as conn:
        execute(conn, "UPDATE AUD_TASK_ATTEMPTS SET HOST = 'another-host' WHERE PID = :p", p=zombie)
    wait_for(lambda: leases_expired(chaos_project), "the dead owner's leases to expire")

    again = processes.run(chaos_project, *RUN)
    assert again.code == 0, again.output
    assert attempts(chaos_project, "pull") == [(1, "LOST", "RECONCILER"), (2, "SUCCESS", "CHILD")]
    assert _alive(zombie), "the zombie task process must still run for this test to mean anything"
    before = _recorded(chaos_project)

    release.write_text("go")
    wait_for(lambda: not _alive(zombie), "the zombie task process to finish")
    log_path = scalar(
        chaos_project, "SELECT LOG_PATH FROM AUD_TASK_ATTEMPTS WHERE PID = :p", p=zombie
    )
    wait_for(lambda: "outcome not recorded" in Path(log_path).read_text(), "the zombie's refusal")
    assert _recorded(chaos_project) == before
    second = scalar(
        chaos_project, "SELECT ATTEMPT_ID FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_NUMBER = 2"
    )
    assert rows(chaos_project, "SELECT OFFSET_VALUE, ATTEMPT_ID FROM AUD_TASK_OFFSETS") == [
        (f"attempt-{second}", second)
    ]
    assert run_statuses(chaos_project) == ["SUCCESS"]
    assert live_attempts(chaos_project) == 0


def _recorded(project: ProjectOnDisk) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the zombie could touch: the attempts, the task runs' summaries, the offset."""
    return {
        table: rows(project, f"SELECT * FROM {table} ORDER BY 1")
        for table in ("AUD_TASK_ATTEMPTS", "AUD_TASK_RUN_LOG", "AUD_TASK_OFFSETS")
    }


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :].split()[0] != "Z"
