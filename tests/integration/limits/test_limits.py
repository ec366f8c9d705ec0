"""Limits and priorities (S5.E): kept when attempts are queued, ordered when they are claimed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.config.owner import OwnerSettings
from etl_craft.core.enums import SlotKind
from etl_craft.enginedb.transitions import claim_attempts
from etl_craft.scheduling.driver import RunDriver, Step
from tests.chaos.harness import rows, scalar
from tests.fixtures.metadata import TESTER
from tests.fixtures.projects import ProjectOnDisk, make_project

# Two projects with a five-task pipeline each; the first may run two attempts at once.
TWO_PROJECTS = """
UPDATE CFG_PROJECTS SET MAX_RUNNING_TASKS = 2 WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_PROJECTS (PROJECT_CODE, PROJECT_NAME) VALUES ('other', 'Other');
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, MAX_PARALLEL_TASKS, PRIORITY)
SELECT PROJECT_ID, 'mine', 10, 0 FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, MAX_PARALLEL_TASKS, PRIORITY)
SELECT PROJECT_ID, 'theirs', 10, 5 FROM CFG_PROJECTS WHERE PROJECT_CODE = 'other';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT p.PIPELINE_ID, p.PIPELINE_CODE || '_' || n.N, 'PYTHON'
  FROM CFG_PIPELINES p, (SELECT 1 AS N UNION ALL SELECT 2 UNION ALL SELECT 3
                         UNION ALL SELECT 4 UNION ALL SELECT 5) n;
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    made.migrate("0001_two_projects.sql", TWO_PROJECTS)
    yield made
    made.engine.dispose()


def driver(
    project: ProjectOnDisk, pipeline: str, settings: OwnerSettings | None = None
) -> RunDriver:
    """The driver of a new admitted run of ``pipeline``."""
    run_id = project.new_run(pipeline, run_key=f"manual:{pipeline}")
    return RunDriver(project.engine, run_id, settings or project.owner_settings(), TESTER)


def queued_by_pipeline(project: ProjectOnDisk) -> dict[str, int]:
    found = rows(
        project,
        "SELECT p.PIPELINE_CODE, count(*) FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN AUD_PIPELINES_RUN_LOG r ON r.PIPELINE_RUN_ID = t.PIPELINE_RUN_ID "
        "JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID GROUP BY p.PIPELINE_CODE",
    )
    return {str(code): int(count) for code, count in found}


def test_a_project_at_its_limit_does_not_block_another_project(project: ProjectOnDisk) -> None:
    mine = driver(project, "mine")
    theirs = driver(project, "theirs")

    assert mine.step()[0] is Step.APPLIED  # two queued, three held back: look again
    assert mine.step()[0] is Step.BUSY  # at MAX_RUNNING_TASKS = 2 of its project
    assert theirs.step()[0] is Step.BUSY  # all five queued at once: nothing left to look at

    # The default project stops at its limit; the other project, unlimited, queues all five.
    assert queued_by_pipeline(project) == {"mine": 2, "theirs": 5}
    assert scalar(project, "SELECT count(*) FROM AUD_TASK_RUN_LOG") == 7


@pytest.mark.parametrize("project", ["postgresql"], indirect=True)
def test_the_queue_hands_out_higher_priority_first_then_the_oldest(
    project: ProjectOnDisk,
) -> None:
    mine = driver(project, "mine")
    theirs = driver(project, "theirs")
    mine.step()  # queued first, at priority 0
    theirs.step()  # queued later, at priority 5

    claimed = []
    with project.engine.transaction(TESTER) as conn:
        # One slot at a time, so that the order of the claims is the queue's.
        while found := claim_attempts(
            conn,
            TESTER,
            pool="default",
            free={SlotKind.INGESTION: 1},
            owner_id="tests:1:1:claims",
            lease_seconds=60,
        ):
            claimed += [attempt.attempt_id for attempt in found]

    order = rows(
        project,
        "SELECT a.ATTEMPT_ID, a.PRIORITY, a.QUEUED_AT FROM AUD_TASK_ATTEMPTS a",
    )
    expected = [attempt for attempt, _, _ in sorted(order, key=lambda r: (-r[1], r[2], r[0]))]
    assert claimed == expected
    assert [priority for _, priority, _ in sorted(order, key=lambda r: claimed.index(r[0]))] == [
        5,
        5,
        5,
        5,
        5,
        0,
        0,
    ]


def test_the_warehouse_limit_holds_back_warehouse_tasks_only(project: ProjectOnDisk) -> None:
    project.migrate(
        "0002_mixed.sql",
        """
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, MAX_PARALLEL_TASKS)
        SELECT PROJECT_ID, 'mixed', 10 FROM CFG_PROJECTS WHERE PROJECT_CODE = 'other';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT p.PIPELINE_ID, t.CODE, t.HANDLER
          FROM CFG_PIPELINES p,
               (SELECT 'sql_1' AS CODE, 'SQL' AS HANDLER UNION ALL SELECT 'sql_2', 'SQL'
                UNION ALL SELECT 'sql_3', 'SQL' UNION ALL SELECT 'py_1', 'PYTHON'
                UNION ALL SELECT 'py_2', 'PYTHON') t
         WHERE p.PIPELINE_CODE = 'mixed';
        """,
    )
    mixed = driver(project, "mixed", project.owner_settings(max_warehouse_queries=2))

    assert mixed.step()[0] is Step.APPLIED
    assert mixed.step()[0] is Step.BUSY

    kinds = rows(
        project,
        "SELECT SLOT_KIND, count(*) FROM AUD_TASK_ATTEMPTS GROUP BY SLOT_KIND ORDER BY 1",
    )
    # Three SQL tasks are ready but two may query the warehouse; both PYTHON tasks go ahead.
    assert kinds == [("ingestion", 2), ("warehouse", 2)]
