"""run --force runs one task now whatever its dependencies say, and records why."""

from __future__ import annotations

from etl_craft.core.errors import ExitCode
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.backfill.conftest import cross_edge
from tests.integration.control.conftest import (
    ACTOR,
    Cli,
    actions,
    interventions,
    rows,
    run_status,
    task_runs,
)
from tests.integration.running.test_ready_set import tasks_sql


def force(cli: Cli, pipeline: str, task: str, *extra: str) -> tuple[int, dict[str, object]]:
    done = cli.json(
        "run",
        "--pipeline_code",
        pipeline,
        "--task_code",
        task,
        "--force",
        "--reason",
        "ship it",
        *extra,
    )
    assert done.out, done.err
    return done.code, done.document()


def test_force_runs_a_task_whose_upstream_in_another_pipeline_failed(
    project: ProjectOnDisk, cli: Cli
) -> None:
    project.migrate(
        "0001_pipelines.sql",
        tasks_sql("up", [("extract", "failing.py", "{}")], [])
        + tasks_sql("down", [("load", "quick.py", "{}")], [])
        + cross_edge("load", "extract", "SUCCESS"),
    )
    assert cli("run", "--pipeline_code", "up").code == ExitCode.FAILURE
    code, document = force(cli, "down", "load")

    assert code == 0, document
    run_id = int(str(document["run"]["run_id"]))  # type: ignore[index]
    assert task_runs(project, run_id) == {"load": ("SUCCESS", 1)}
    assert run_status(project, run_id) == "SUCCESS"
    assert interventions(project, run_id) == [
        ("FORCE", "load", None, "IN-PROGRESS", "ship it", ACTOR)
    ]
    decided = rows(
        project,
        "SELECT RESULT AS result, REASON AS reason FROM AUD_GATE_DECISIONS "
        "WHERE PIPELINE_RUN_ID = :r",
        r=run_id,
    )
    assert decided == [
        {
            "result": "BYPASSED",
            "reason": f"SUCCESS dependency on up.extract bypassed: forced by {ACTOR}: ship it",
        }
    ]
    (action,) = actions(project, "run")[-1:]  # the plain run of up records one too
    assert (action["actor"], action["outcome"], action["run_id"], action["task"]) == (
        ACTOR,
        "REQUESTED",
        run_id,
        "load",
    )


def test_force_runs_a_task_its_failed_upstream_skipped_and_leaves_the_rest_alone(
    project: ProjectOnDisk, cli: Cli
) -> None:
    project.migrate(
        "0001_chain.sql",
        tasks_sql(
            "chain",
            [
                ("first", "failing.py", "{}"),
                ("second", "quick.py", "{}"),
                ("third", "quick.py", "{}"),
            ],
            [("second", "first"), ("third", "second")],
        ),
    )
    failed = cli.json("run", "--pipeline_code", "chain")
    run_id = int(failed.document()["run_id"])
    assert task_runs(project, run_id)["second"] == ("SKIPPED", 0)
    assert (
        cli("reopen", "--pipeline_code", "chain", "--run-id", str(run_id), "--reason", "r").code
        == 0
    )

    code, document = force(cli, "chain", "second", "--run-id", str(run_id))

    assert code == 0, document
    statuses = task_runs(project, run_id)
    assert statuses["second"] == ("SUCCESS", 1)
    assert statuses["first"] == ("FAILED", 1)
    assert ("FORCE", "second", "SKIPPED", "IN-PROGRESS", "ship it", ACTOR) in interventions(
        project, run_id
    )


def test_force_names_one_task_and_a_reason(project: ProjectOnDisk, cli: Cli) -> None:
    project.migrate("0001_one.sql", tasks_sql("one", [("only", "quick.py", "{}")], []))
    no_task = cli("run", "--pipeline_code", "one", "--force", "--reason", "r")
    assert no_task.code == ExitCode.USAGE
    assert "--force runs one task; found 0 --task:" in no_task.err
    no_reason = cli("run", "--pipeline_code", "one", "--task_code", "only", "--force")
    assert no_reason.code == ExitCode.USAGE
    assert "run --force needs a reason" in no_reason.err
    unknown = cli(
        "run", "--pipeline_code", "one", "--task_code", "nope", "--force", "--reason", "r"
    )
    assert unknown.code == ExitCode.RUN_STATE
    assert "pipeline one has no active task 'nope' to force; its tasks are: only" in unknown.err
    assert rows(project, "SELECT PIPELINE_RUN_ID FROM AUD_PIPELINES_RUN_LOG") == []
