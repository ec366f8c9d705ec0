"""Remote mode's rules on both Engine DBs: --init-only, run --task as told, --finalize-only,
and mark and cancel refused (G5a)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.core.enums import RunStatus, TaskRunStatus
from etl_craft.core.errors import OrchestratorUnsupportedError, RunStateError, UsageError
from etl_craft.operations.context import ContextRequest, OperationContext, build_context
from etl_craft.operations.interventions.actions import MarkRequest, cancel, mark
from etl_craft.operations.remote.mode import RemoteRequest, finalize_run, init_run, run_task
from etl_craft.operations.runs.views import RunView
from tests.conftest import DIALECTS
from tests.fixtures.projects import ProjectOnDisk, make_project

PIPELINE = """\
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'orders' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT p.PIPELINE_ID, x.C, 'SQL' FROM CFG_PIPELINES p
  JOIN (SELECT 'first' AS C UNION ALL SELECT 'second' UNION ALL SELECT 'broken') x ON 1 = 1
 WHERE p.PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE)
SELECT d.TASK_ID, u.TASK_ID, 'SUCCESS' FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'second' AND u.TASK_CODE = 'first';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT t.TASK_ID, x.N, x.V FROM CFG_TASKS t JOIN (
  SELECT 'ACTION' AS N, 'CREATE_TABLE' AS V UNION ALL SELECT 'TARGET_OBJECT', 'main.numbers'
) x ON 1 = 1 WHERE t.TASK_CODE IN ('first', 'second', 'broken');
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SOURCE_SQL', 'SELECT 1 AS n' FROM CFG_TASKS WHERE TASK_CODE IN ('first', 'second');
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SOURCE_SQL', 'SELECT n FROM main.no_such_table' FROM CFG_TASKS
 WHERE TASK_CODE = 'broken';
"""
N_CONDITION = """\
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'counted' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER, RUN_CONDITION, REQUIRED_COUNT)
SELECT PIPELINE_ID, 'tally', 'SQL', 'N', 1 FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'counted';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT t.TASK_ID, x.N, x.V FROM CFG_TASKS t JOIN (
  SELECT 'ACTION' AS N, 'CREATE_TABLE' AS V UNION ALL SELECT 'TARGET_OBJECT', 'main.tally'
  UNION ALL SELECT 'SOURCE_SQL', 'SELECT 1 AS n'
) x ON 1 = 1 WHERE t.TASK_CODE = 'tally';
"""


@pytest.fixture(params=DIALECTS)
def remote(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OperationContext]:
    url = request.getfixturevalue("pg_fresh_url") if request.param == "postgresql" else None
    project: ProjectOnDisk = make_project(tmp_path / "project", url)
    project.migrate("0001_orders.sql", PIPELINE)
    project.migrate("0002_counted.sql", N_CONDITION)
    project.engine.dispose()
    with project.config.open("a") as config:
        config.write("Orchestration:\n  mode: remote\n")
    ctx = build_context(ContextRequest(config=project.config, cwd=project.root))
    yield ctx
    ctx.close()


def ask(key: str, task: str | None = None) -> RemoteRequest:
    return RemoteRequest("orders", key, None, task)


def statuses(view: RunView) -> dict[str, tuple[TaskRunStatus | None, int]]:
    return {task.task_code: (task.status, task.attempts) for task in view.tasks}


def test_init_only_creates_the_orchestrators_run_once_and_judges_no_gate(
    remote: OperationContext,
) -> None:
    first = init_run(remote, ask("orchestrator:dag_run_1"))
    again = init_run(remote, ask("orchestrator:dag_run_1"))
    assert first.run_id == again.run_id
    assert first.status is RunStatus.IN_PROGRESS
    assert first.run_key == "orchestrator:dag_run_1"
    assert all(attempts == 0 for _, attempts in statuses(first).values())


def test_a_task_runs_as_told_past_its_dependencies_and_again_as_a_new_attempt(
    remote: OperationContext,
) -> None:
    init_run(remote, ask("orchestrator:dag_run_2"))
    ran = run_task(remote, ask("orchestrator:dag_run_2", "second"))  # first never ran
    assert statuses(ran)["second"] == (TaskRunStatus.SUCCESS, 1), [t.error for t in ran.tasks]
    assert statuses(ran)["first"] == (None, 0)
    again = run_task(remote, ask("orchestrator:dag_run_2", "second"))
    assert statuses(again)["second"] == (TaskRunStatus.SUCCESS, 2)


def test_finalize_skips_what_never_ran_and_fails_the_run_when_a_task_failed(
    remote: OperationContext,
) -> None:
    init_run(remote, ask("orchestrator:dag_run_3"))
    run_task(remote, ask("orchestrator:dag_run_3", "first"))
    run_task(remote, ask("orchestrator:dag_run_3", "broken"))
    ended = finalize_run(remote, ask("orchestrator:dag_run_3"))
    assert ended.status is RunStatus.FAILED
    assert statuses(ended) == {
        "first": (TaskRunStatus.SUCCESS, 1),
        "broken": (TaskRunStatus.FAILED, 1),
        "second": (TaskRunStatus.SKIPPED, 0),
    }
    assert finalize_run(remote, ask("orchestrator:dag_run_3")).status is RunStatus.FAILED


def test_finalize_succeeds_when_every_task_that_ran_succeeded_and_skips_a_run_that_ran_none(
    remote: OperationContext,
) -> None:
    init_run(remote, ask("orchestrator:dag_run_4"))
    run_task(remote, ask("orchestrator:dag_run_4", "first"))
    assert finalize_run(remote, ask("orchestrator:dag_run_4")).status is RunStatus.SUCCESS
    init_run(remote, ask("orchestrator:dag_run_5"))
    assert finalize_run(remote, ask("orchestrator:dag_run_5")).status is RunStatus.SKIPPED


def test_a_cleared_dag_run_reopens_its_ended_run(remote: OperationContext) -> None:
    init_run(remote, ask("orchestrator:dag_run_6"))
    ended = finalize_run(remote, ask("orchestrator:dag_run_6"))
    reopened = init_run(remote, ask("orchestrator:dag_run_6"))
    assert reopened.run_id == ended.run_id
    assert reopened.status is RunStatus.IN_PROGRESS


def test_mark_and_cancel_refuse_pointing_to_the_orchestrator(remote: OperationContext) -> None:
    run = init_run(remote, ask("orchestrator:dag_run_7"))
    with pytest.raises(RunStateError, match="refused: this project runs in remote mode"):
        mark(remote, MarkRequest("orders", "SUCCESS", "by hand", run.run_id))
    with pytest.raises(RunStateError, match="in the orchestrator"):
        cancel(remote, "orders", run.run_id, "by hand")


def test_init_only_refuses_a_rule_the_orchestrator_cannot_express(
    remote: OperationContext,
) -> None:
    with pytest.raises(OrchestratorUnsupportedError, match="N_RUN_CONDITION"):
        init_run(remote, RemoteRequest("counted", "orchestrator:dag_run_8"))
    with pytest.raises(UsageError, match="--run-key"):
        init_run(remote, RemoteRequest("orders", None))
