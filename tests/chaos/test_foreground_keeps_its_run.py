"""`etl-craft run` beside a running server: the run the caller creates is its own from the
first moment, so the server never admits or drives it and the caller exits with the run's code."""

from __future__ import annotations

from tests.chaos.harness import rows
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.overseer.test_server import overseers, pair_pipeline

CALLS = 20


def test_a_foreground_run_beside_a_server_keeps_its_run_every_time(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    pair_pipeline(chaos_project)
    processes.start(chaos_project, "server")
    wait_for(lambda: len(overseers(chaos_project)) == 1, "the server to lead")
    ((leader, _),) = overseers(chaos_project)
    codes = []
    for _ in range(CALLS):
        done = processes.run(chaos_project, "run", "--pipeline_code", "pair")
        codes.append(done.code)
        assert done.code == 0, done.output
    owners = {
        str(owner)
        for (owner,) in rows(chaos_project, "SELECT DISTINCT OWNER_ID FROM AUD_TASK_ATTEMPTS")
    }
    assert codes == [0] * CALLS
    assert leader not in owners  # every attempt ran under its caller, none under the server
