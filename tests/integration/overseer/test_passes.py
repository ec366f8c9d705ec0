"""What one overseer pass costs: admission in a bounded number of statements, and steps only
for the runs with news plus a bounded sweep, whatever the number of live runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from etl_craft.core.actor import SYSTEM
from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus
from etl_craft.enginedb.events import Listener
from etl_craft.enginedb.transitions import (
    AttemptOutcome,
    admit_run,
    claim_attempt,
    finish_attempt,
    start_attempt,
)
from etl_craft.runtime.metrics import time_engine_statements
from etl_craft_overseer.overseer import SWEEP_RUNS, Overseer
from etl_craft_overseer.queue_pool import QueuePool
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.projects import ProjectOnDisk, make_project

OWNER = "worker-host:1:0:w"
PIPELINES = SWEEP_RUNS + 24  # more live runs than one pass's sweep


def pipelines_sql(count: int) -> str:
    """``count`` pipelines p00.. of two chained tasks (first -> second), QUEUE overlap."""
    return f"""
    INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, OVERLAP_POLICY)
    SELECT p.PROJECT_ID, 'p' || lpad(CAST(g AS TEXT), 2, '0'), 'QUEUE'
      FROM CFG_PROJECTS p CROSS JOIN generate_series(0, {count - 1}) AS g;
    INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
    SELECT l.PIPELINE_ID, t.code, 'PYTHON' FROM CFG_PIPELINES l
     CROSS JOIN (VALUES ('first'), ('second')) AS t (code);
    INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
    SELECT TASK_ID, 'SCRIPT', 'noop.py' FROM CFG_TASKS;
    INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
    SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d JOIN CFG_TASKS u
        ON u.PIPELINE_ID = d.PIPELINE_ID AND u.TASK_CODE = 'first'
     WHERE d.TASK_CODE = 'second';
    """


@pytest.fixture
def project(tmp_path: Path, pg_fresh_url: str) -> Iterator[ProjectOnDisk]:
    made = make_project(tmp_path / "etl-craft", pg_fresh_url)
    made.migrate("0001_pipelines.sql", pipelines_sql(PIPELINES))
    time_engine_statements()  # the tests count statements as /metrics would
    yield made
    made.engine.dispose()


def overseer(project: ProjectOnDisk) -> Overseer:
    # The queue provider starts nothing: attempts stay queued for workers, as the test wants.
    settings = project.owner_settings(owner_id="overseer:1:0:o", poll_seconds=60.0)
    return Overseer(project.engine, settings, QueuePool(project.engine))


def executed(statement: str) -> float:
    labels = {"statement": statement}
    return REGISTRY.get_sample_value("etl_craft_enginedb_statement_seconds_count", labels) or 0.0


def status(project: ProjectOnDisk, run_id: int) -> str:
    with project.engine.read() as conn:
        query = "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r"
        return str(execute(conn, query, r=run_id).scalar_one())


def queued_tasks(project: ProjectOnDisk, run_id: int) -> dict[str, int]:
    """Each task's attempt id in the run, queued or ended."""
    with project.engine.read() as conn:
        found = execute(
            conn,
            "SELECT k.TASK_CODE, a.ATTEMPT_ID FROM AUD_TASK_ATTEMPTS a "
            "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
            "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE t.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).all()
    return {str(code): int(attempt) for code, attempt in found}


def test_a_pass_admits_every_admissible_queued_run_in_one_statement(
    project: ProjectOnDisk,
) -> None:
    runs = [project.queued_run(f"p{n:02d}") for n in range(PIPELINES)]
    # A second run of p00 waits behind the first (QUEUE overlap), as does p01's once its
    # first run is in progress; p02 depends on p03 through a pipeline gate, which never ran.
    behind = project.queued_run("p00", run_key="manual:second")
    with project.engine.transaction(TESTER) as conn:
        admit_run(conn, runs[1], SYSTEM)
    sibling = project.queued_run("p01", run_key="manual:sibling")
    project.migrate(
        "0002_gate.sql",
        """
        INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID, DEPENDENCY_TYPE)
        SELECT d.PIPELINE_ID, u.PIPELINE_ID, 'SUCCESS' FROM CFG_PIPELINES d, CFG_PIPELINES u
         WHERE d.PIPELINE_CODE = 'p02' AND u.PIPELINE_CODE = 'p03';
        """,
    )
    one, together = executed("transition_admit_run"), executed("transition_admit_runs")

    overseer(project).run_pass(full=True)

    assert executed("transition_admit_runs") - together == 1
    assert executed("transition_admit_run") - one == 0  # the gated p02 still waits on p03
    assert status(project, runs[2]) == "QUEUED"
    assert status(project, behind) == "QUEUED"
    assert status(project, sibling) == "QUEUED"
    admitted = [run for n, run in enumerate(runs) if n not in (1, 2)]
    assert {status(project, run) for run in admitted} == {"IN-PROGRESS"}


def test_a_pass_steps_the_runs_with_news_and_a_bounded_sweep(project: ProjectOnDisk) -> None:
    runs = [project.queued_run(f"p{n:02d}") for n in range(PIPELINES)]
    driving = overseer(project)
    with Listener(project.engine) as listener:
        driving.run_pass(full=True)
        while driving.news:  # the budget of a pass may leave some for the next ones
            driving.run_pass(full=False)
        assert all(set(queued_tasks(project, run)) == {"first"} for run in runs)
        listener.drain()
        # A worker runs `first` of the run looked at most recently, which no sweep takes next.
        newest = list(driving.looked)[-1]
        attempt = queued_tasks(project, newest)["first"]
        with project.engine.transaction(TESTER) as conn:
            claim_attempt(conn, attempt, TESTER, owner_id=OWNER, lease_seconds=60)
            start_attempt(
                conn,
                attempt,
                TESTER,
                owner_id=OWNER,
                host="h",
                pid=1,
                process_start="0",
                log_path=None,
            )
            finish_attempt(
                conn,
                attempt,
                TESTER,
                owner_id=OWNER,
                outcome=AttemptOutcome(AttemptStatus.SUCCESS, Counts(rows_written=1)),
            )
        news_reads = executed("overseer_runs_of_news")
        full = driving._wait(listener)
        # An attempt and task run its driver queued and read: no need to ask whose they are.
        assert executed("overseer_runs_of_news") == news_reads
        assert newest in driving.news
        looks = executed("run_controls")  # one per step of a run

        driving.run_pass(full=full)

    assert not full  # an attempt's news: no need to read every live run again
    assert executed("run_controls") - looks <= 1 + SWEEP_RUNS < PIPELINES
    assert set(queued_tasks(project, newest)) == {"first", "second"}


def test_pipelines_are_judged_blocked_again_only_once_the_metadata_changed(
    project: ProjectOnDisk,
) -> None:
    driving = overseer(project)
    driving.run_pass(full=True)  # the first pass judges every pipeline
    judged = executed("metadata_active_projects")
    driving.next_housekeeping = 0.0
    driving.run_pass(full=True)
    assert executed("metadata_active_projects") == judged  # nothing changed: not again

    # A cycle blocks p05: its queued run is skipped saying why, as before.
    run_id = project.queued_run("p05")
    project.migrate(
        "0002_cycle.sql",
        """
        INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
        SELECT u.TASK_ID, d.TASK_ID FROM CFG_TASKS d
          JOIN CFG_TASKS u ON u.PIPELINE_ID = d.PIPELINE_ID AND u.TASK_CODE = 'first'
          JOIN CFG_PIPELINES l ON l.PIPELINE_ID = d.PIPELINE_ID
         WHERE d.TASK_CODE = 'second' AND l.PIPELINE_CODE = 'p05';
        """,
    )
    driving.next_housekeeping = 0.0
    driving.run_pass(full=True)

    assert executed("metadata_active_projects") == judged + 1
    assert status(project, run_id) == "SKIPPED"
    with project.engine.read() as conn:
        message = execute(
            conn, "SELECT MESSAGE FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r", r=run_id
        ).scalar_one()
    assert "pipeline p05 cannot run" in message
    assert "cycle" in message
