"""A pipeline whose graph cannot be built, beside one that runs: the two a bad metadata
change leaves in one project."""

from __future__ import annotations

from tests.chaos.harness import QUICK, rows
from tests.fixtures.projects import ProjectOnDisk

# Two PYTHON tasks that each wait for the other: every task is valid, the graph has no order.
RING = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE{schedule_column})
SELECT PROJECT_ID, 'ring'{schedule_value} FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'east', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'ring';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'west', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'ring';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SCRIPT', 'quick.py' FROM CFG_TASKS WHERE TASK_CODE IN ('east', 'west');
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'east' AND u.TASK_CODE = 'west';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'west' AND u.TASK_CODE = 'east';
"""
GOOD = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE{schedule_column})
SELECT PROJECT_ID, 'good'{schedule_value} FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'only', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'good';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SCRIPT', 'quick.py' FROM CFG_TASKS WHERE TASK_CODE = 'only';
"""
CYCLE = "the task dependencies form a cycle"


def ring_and_good(project: ProjectOnDisk, schedule: str | None = None) -> None:
    """Both pipelines, each on ``schedule`` when one is given (else manual only)."""
    (project.root / "ingestion_scripts" / "quick.py").write_text(QUICK)
    column, value = ("", "") if schedule is None else (", RUN_SCHEDULE", f", '{schedule}'")
    project.migrate("0001_ring.sql", RING.format(schedule_column=column, schedule_value=value))
    project.migrate("0002_good.sql", GOOD.format(schedule_column=column, schedule_value=value))


def runs_of(project: ProjectOnDisk, pipeline: str) -> list[tuple[str, str | None]]:
    """(status, message) of the pipeline's runs, oldest first."""
    return [
        (str(status), message)
        for status, message in rows(
            project,
            "SELECT r.STATUS, r.MESSAGE FROM AUD_PIPELINES_RUN_LOG r JOIN CFG_PIPELINES p "
            "ON p.PIPELINE_ID = r.PIPELINE_ID WHERE p.PIPELINE_CODE = :p ORDER BY r.PIPELINE_RUN_ID",
            p=pipeline,
        )
    ]
