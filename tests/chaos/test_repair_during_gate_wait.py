"""An upstream repaired while a downstream gate waits: admitted with the repaired revision.

down.load depends on up.extract in another pipeline with CONSUME_REPAIRS='Y'. A first
downstream run consumed up's run at revision 1, so the next one waits; meanwhile a second
caller is refused, and an operator reruns up.extract, which ends up's run again at revision 2.
The waiting gate admits with that revision and the consumption records it.
"""

from __future__ import annotations

from tests.chaos.harness import QUICK, live_attempts, rows, scalar
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

PIPELINES = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, x.P FROM CFG_PROJECTS, (SELECT 'up' AS P UNION ALL SELECT 'down') x
 WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, CASE PIPELINE_CODE WHEN 'up' THEN 'extract' ELSE 'load' END, 'PYTHON'
  FROM CFG_PIPELINES;
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SCRIPT', 'quick.py' FROM CFG_TASKS;
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE, CONSUME_REPAIRS)
SELECT d.TASK_ID, u.TASK_ID, 'SUCCESS', 'Y' FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'load' AND u.TASK_CODE = 'extract';
"""


def run_of(project: ProjectOnDisk, key: str) -> int:
    return int(
        scalar(
            project, "SELECT PIPELINE_RUN_ID FROM AUD_PIPELINES_RUN_LOG WHERE RUN_KEY = :k", k=key
        )
    )


def test_a_repair_during_a_gate_wait_is_admitted_and_consumed_at_its_revision(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    (chaos_project.root / "ingestion_scripts" / "quick.py").write_text(QUICK)
    chaos_project.migrate("0001_pipelines.sql", PIPELINES)
    for pipeline, key in (("up", "up-1"), ("down", "down-1")):
        done = processes.run(chaos_project, "run", "--pipeline_code", pipeline, "--run-key", key)
        assert done.code == 0, done.output
    upstream = run_of(chaos_project, "up-1")
    waiting_run = ("run", "--pipeline_code", "down", "--run-key", "down-2")
    waiter = processes.start(chaos_project, *waiting_run)

    def gate_waits() -> bool:
        return bool(
            scalar(chaos_project, "SELECT count(*) FROM AUD_GATE_WAITS WHERE RESOLVED_AT IS NULL")
        )

    wait_for(gate_waits, "the downstream gate to wait for a new upstream revision")
    second = processes.run(chaos_project, *waiting_run)
    assert "is supervised by" in second.output, second.output
    repair = processes.run(
        chaos_project,
        "run",
        "--pipeline_code",
        "up",
        "--run-id",
        str(upstream),
        "--rerun",
        "--task_code",
        "extract",
        "--reason",
        "source corrected",
    )
    assert repair.code == 0, repair.output
    waited = processes.finish(waiter)

    assert waited.code == 0, waited.output
    downstream = run_of(chaos_project, "down-2")
    statuses = rows(
        chaos_project,
        "SELECT RUN_KEY, STATUS, OUTPUT_REVISION FROM AUD_PIPELINES_RUN_LOG ORDER BY 1",
    )
    assert statuses == [
        ("down-1", "SUCCESS", 1),
        ("down-2", "SUCCESS", 1),
        ("up-1", "SUCCESS", 2),
    ]
    assert rows(
        chaos_project,
        "SELECT RESULT, SELECTED_PIPELINE_RUN_ID, SELECTED_REVISION FROM AUD_GATE_DECISIONS "
        "WHERE PIPELINE_RUN_ID = :r",
        r=downstream,
    ) == [("SATISFIED", upstream, 2)]
    assert rows(
        chaos_project,
        "SELECT CONSUMED_PIPELINE_RUN_ID, CONSUMED_REVISION FROM AUD_DEPENDENCY_CONSUMPTION "
        "WHERE PIPELINE_RUN_ID = :r",
        r=downstream,
    ) == [(upstream, 2)]
    assert not gate_waits()
    assert live_attempts(chaos_project) == 0
