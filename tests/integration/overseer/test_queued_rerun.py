"""A rerun queued for `etl-craft server`, with and without its downstream task runs."""

from __future__ import annotations

import dataclasses

import pytest
from fastapi.testclient import TestClient

from etl_craft.core.actor import Actor, ActorKind
from etl_craft.operations.access.api_tokens import TokenRequest, create_token
from etl_craft.operations.context import ContextRequest, build_context
from etl_craft.operations.runs.reruns import RerunRequest, queue_rerun
from etl_craft_api.app import create_app
from tests.chaos.harness import rows
from tests.fixtures.processes import Processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.overseer.test_server import overseers, pair_pipeline, run_status

OPERATOR = Actor("ops_lead", ActorKind.HUMAN)
# third depends on second: with first failed, the engine skips both.
THIRD = """
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'third', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'pair';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'third' AND u.TASK_CODE = 'second';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SCRIPT', 'quick.py' FROM CFG_TASKS WHERE TASK_CODE = 'third';
UPDATE CFG_TASK_PARAMETERS SET PARAMETER_VALUE = 'flaky.py'
 WHERE PARAMETER_NAME = 'SCRIPT' AND TASK_ID = (SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = 'first');
"""
# Fails until the file it names exists: the source an operator fixes before the rerun.
FLAKY = """
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    if not Path({fixed!r}).exists():
        raise RuntimeError("the source is not fixed yet")
    return ScriptResult(row_count=1)
"""


def _attempts(project: ProjectOnDisk, run_id: int) -> dict[str, int]:
    found = rows(
        project,
        "SELECT k.TASK_CODE, count(a.ATTEMPT_ID) FROM AUD_TASK_RUN_LOG t "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "LEFT JOIN AUD_TASK_ATTEMPTS a ON a.TASK_RUN_ID = t.TASK_RUN_ID AND a.STATUS = 'SUCCESS' "
        "WHERE t.PIPELINE_RUN_ID = :r GROUP BY k.TASK_CODE",
        r=run_id,
    )
    return {str(task): int(count) for task, count in found}


def _queue_through_the_api(project: ProjectOnDisk, run_id: int, with_downstream: bool) -> None:
    """POST the rerun as the operator whose token is named ops_lead (the actor it records)."""
    ctx = build_context(ContextRequest(config=project.config, cwd=project.root))
    try:
        admin = dataclasses.replace(ctx, actor=OPERATOR)
        token = create_token(admin, TokenRequest("ops_lead", "operator", None)).token
        response = TestClient(create_app(ctx)).post(
            f"/api/v1/runs/{run_id}/tasks/first/rerun",
            headers={"Authorization": f"Bearer {token}"},
            json={"reason": "source fixed", "with_downstream": with_downstream},
        )
    finally:
        ctx.close()
    assert response.status_code == 202, response.text
    assert response.json()["schema"] == "etl-craft/rerun/1"


def _reruns(project: ProjectOnDisk, run_id: int) -> list[tuple[object, ...]]:
    found = rows(
        project,
        "SELECT k.TASK_CODE, i.REQUESTED_BY, i.REASON FROM AUD_RUN_INTERVENTIONS i "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = i.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE i.PIPELINE_RUN_ID = :r AND i.KIND = 'RERUN' ORDER BY i.INTERVENTION_ID",
        r=run_id,
    )
    return [tuple(row) for row in found]


@pytest.mark.parametrize("with_downstream", [True, False])
def test_a_failed_task_rerun_by_the_server_brings_its_skipped_downstream_back(
    chaos_project: ProjectOnDisk, processes: Processes, with_downstream: bool
) -> None:
    fixed = chaos_project.root / "source-fixed"
    (chaos_project.root / "ingestion_scripts" / "flaky.py").write_text(
        FLAKY.format(fixed=str(fixed))
    )
    pair_pipeline(chaos_project, THIRD)
    processes.start(chaos_project, "server")
    wait_for(lambda: len(overseers(chaos_project)) == 1, "the server to take the lead")
    run_id = chaos_project.queued_run("pair")
    wait_for(lambda: run_status(chaos_project, run_id) == "FAILED", "the run to fail")
    assert _attempts(chaos_project, run_id) == {"first": 0, "second": 0, "third": 0}
    fixed.touch()

    _queue_through_the_api(chaos_project, run_id, with_downstream)

    wait_for(
        lambda: (
            _pending(chaos_project) == 0
            and run_status(chaos_project, run_id) == "SUCCESS"
            and _attempts(chaos_project, run_id) == {"first": 1, "second": 1, "third": 1}
        ),
        "the server to rerun first, then second and third",
    )
    # The supervisor plans the engine's skips again with first: once run, they are not redone.
    assert _reruns(chaos_project, run_id) == [("first", "ops_lead", "source fixed")]
    requests = rows(chaos_project, "SELECT REQUESTED_BY, REASON FROM AUD_DOWNSTREAM_RERUNS")
    assert [tuple(row) for row in requests] == (
        [("ops_lead", "source fixed")] if with_downstream else []
    )


def _pending(project: ProjectOnDisk) -> int:
    found = rows(project, "SELECT count(*) FROM AUD_DOWNSTREAM_RERUNS WHERE SETTLED_AT IS NULL")
    return int(found[0][0])


@pytest.mark.parametrize("with_downstream", [True, False])
def test_a_queued_rerun_redoes_the_downstream_only_when_asked(
    chaos_project: ProjectOnDisk, processes: Processes, with_downstream: bool
) -> None:
    pair_pipeline(chaos_project)
    processes.start(chaos_project, "server")
    wait_for(lambda: len(overseers(chaos_project)) == 1, "the server to take the lead")
    run_id = chaos_project.queued_run("pair")
    wait_for(lambda: run_status(chaos_project, run_id) == "SUCCESS", "the run to succeed")
    ctx = build_context(ContextRequest(config=chaos_project.config, cwd=chaos_project.root))
    try:
        queue_rerun(
            dataclasses.replace(ctx, actor=OPERATOR),
            RerunRequest("pair", "first", "source fixed", run_id, with_downstream),
        )
    finally:
        ctx.close()

    redone = {"first": 2, "second": 2 if with_downstream else 1}
    wait_for(
        lambda: (
            _pending(chaos_project) == 0
            and run_status(chaos_project, run_id) == "SUCCESS"
            and _attempts(chaos_project, run_id) == redone
        ),
        "the server to carry the rerun out",
    )
    reruns = rows(
        chaos_project,
        "SELECT k.TASK_CODE, i.REQUESTED_BY, i.REASON FROM AUD_RUN_INTERVENTIONS i "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = i.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE i.PIPELINE_RUN_ID = :r AND i.KIND = 'RERUN' ORDER BY i.INTERVENTION_ID",
        r=run_id,
    )
    tasks = ["first", "second"] if with_downstream else ["first"]
    assert [tuple(row) for row in reruns] == [(t, "ops_lead", "source fixed") for t in tasks]
    requests = rows(chaos_project, "SELECT REQUESTED_BY, REASON FROM AUD_DOWNSTREAM_RERUNS")
    assert [tuple(row) for row in requests] == (
        [("ops_lead", "source fixed")] if with_downstream else []
    )


def test_a_server_started_between_two_stages_carries_the_rerun_on_from_the_tables(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    pair_pipeline(chaos_project)
    run_id = chaos_project.queued_run("pair")
    ran = processes.finish(
        processes.start(chaos_project, "run", "--pipeline_code", "pair", "--run-id", str(run_id))
    )
    assert ran.code == 0, ran.output
    _queue_through_the_api(chaos_project, run_id, with_downstream=True)
    # The first stage run to the run's end with no server: as if one had died right after it.
    again = processes.finish(
        processes.start(chaos_project, "run", "--pipeline_code", "pair", "--run-id", str(run_id))
    )
    assert again.code == 0, again.output
    assert run_status(chaos_project, run_id) == "SUCCESS"
    assert _attempts(chaos_project, run_id) == {"first": 2, "second": 1}
    assert _pending(chaos_project) == 1

    processes.start(chaos_project, "server")

    wait_for(
        lambda: (
            _pending(chaos_project) == 0
            and run_status(chaos_project, run_id) == "SUCCESS"
            and _attempts(chaos_project, run_id) == {"first": 2, "second": 2}
        ),
        "the server to rerun second after first",
    )
    assert _reruns(chaos_project, run_id) == [
        ("first", "ops_lead", "source fixed"),
        ("second", "ops_lead", "source fixed"),
    ]
