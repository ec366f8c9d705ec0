"""run --ignore-dependencies runs every task after its upstreams, whatever they ended as."""

from __future__ import annotations

from etl_craft.core.errors import ExitCode
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.backfill.conftest import cross_edge
from tests.integration.control.conftest import ACTOR, Cli, interventions, rows, task_runs
from tests.integration.running.test_ready_set import tasks_sql


def test_ignore_dependencies_runs_every_task_in_order_and_bypasses_gates(
    project: ProjectOnDisk, cli: Cli
) -> None:
    # first fails; second needs it to succeed; gated needs a pipeline that has never run.
    project.migrate(
        "0001_pipelines.sql",
        tasks_sql("never", [("source", "quick.py", "{}")], [])
        + tasks_sql(
            "chain",
            [
                ("first", "failing.py", "{}"),
                ("second", "quick.py", "{}"),
                ("gated", "quick.py", "{}"),
            ],
            [("second", "first")],
        )
        + cross_edge("gated", "source", "SUCCESS"),
    )
    done = cli.json(
        "run", "--pipeline_code", "chain", "--ignore-dependencies", "--reason", "month end"
    )

    assert done.code == ExitCode.FAILURE, done.err  # first failed, and it decides the run
    run_id = int(done.document()["run"]["run_id"])
    assert task_runs(project, run_id) == {
        "first": ("FAILED", 1),
        "second": ("SUCCESS", 1),
        "gated": ("SUCCESS", 1),
    }
    (order,) = rows(
        project,
        "SELECT f.ENDED_AT AS first_ended, s.STARTED_AT AS second_started "
        "FROM AUD_TASK_ATTEMPTS f, AUD_TASK_ATTEMPTS s, AUD_TASK_RUN_LOG ft, AUD_TASK_RUN_LOG st, "
        "CFG_TASKS fk, CFG_TASKS sk WHERE f.TASK_RUN_ID = ft.TASK_RUN_ID "
        "AND s.TASK_RUN_ID = st.TASK_RUN_ID AND ft.TASK_ID = fk.TASK_ID AND st.TASK_ID = sk.TASK_ID "
        "AND fk.TASK_CODE = 'first' AND sk.TASK_CODE = 'second'",
    )
    assert str(order["second_started"]) >= str(order["first_ended"])
    assert interventions(project, run_id) == [
        ("IGNORE_DEPENDENCIES", None, None, None, "month end", ACTOR)
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
            "reason": f"SUCCESS dependency on never.source bypassed: dependencies ignored by "
            f"{ACTOR}: month end",
        }
    ]


def test_ignore_dependencies_is_for_the_whole_pipeline(project: ProjectOnDisk, cli: Cli) -> None:
    project.migrate("0001_one.sql", tasks_sql("one", [("only", "quick.py", "{}")], []))
    done = cli(
        "run",
        "--pipeline_code",
        "one",
        "--task_code",
        "only",
        "--ignore-dependencies",
        "--reason",
        "r",
    )
    assert done.code == ExitCode.USAGE
    assert "use --force --task T" in done.err
