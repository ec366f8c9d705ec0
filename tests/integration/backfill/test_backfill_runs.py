"""run --backfill: one BACKFILL run per date, stopped with a resume command, kept apart from
manual runs."""

from __future__ import annotations

import re
from datetime import date

from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import TriggerKind
from etl_craft.core.errors import ExitCode
from etl_craft.enginedb.transitions import admit_run, create_run
from tests.fixtures.metadata import TESTER
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import ACTOR, Cli, actions, interventions, rows
from tests.integration.running.test_ready_set import tasks_sql

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def daily(project: ProjectOnDisk, fail_on: tuple[str, ...] = ()) -> None:
    listed = ", ".join(f'"{day}"' for day in fail_on)
    project.migrate(
        "0001_daily.sql",
        tasks_sql("daily", [("load", "dated.py", f'{{"fail_on": [{listed}]}}')], []),
    )


def backfill(cli: Cli, dates: str) -> tuple[int, dict[str, object]]:
    done = cli.json(
        "run", "--pipeline_code", "daily", "--backfill", dates, "--reason", "reload January"
    )
    assert done.out, done.err
    return done.code, done.document()


def runs(project: ProjectOnDisk) -> list[dict[str, object]]:
    return rows(
        project,
        "SELECT PIPELINE_RUN_ID AS run_id, RUN_KEY AS run_key, TRIGGER_KIND AS kind, "
        "RUN_DATE AS run_date, STATUS AS status FROM AUD_PIPELINES_RUN_LOG ORDER BY PIPELINE_RUN_ID",
    )


def test_a_three_date_backfill_makes_one_backfill_run_per_date(
    project: ProjectOnDisk, cli: Cli
) -> None:
    daily(project)
    code, document = backfill(cli, "2026-01-01:2026-01-03")

    assert code == 0, document
    assert document["complete"] is True
    found = runs(project)
    assert [str(run["run_date"])[:10] for run in found] == [
        "2026-01-01",
        "2026-01-02",
        "2026-01-03",
    ]
    for run in found:
        assert (run["kind"], run["status"]) == ("BACKFILL", "SUCCESS")
        assert re.fullmatch(f"backfill:{str(run['run_date'])[:10]}:{UUID}", str(run["run_key"]))
        assert interventions(project, int(str(run["run_id"]))) == [
            ("BACKFILL", None, None, "QUEUED", "reload January", ACTOR)
        ]
    recorded = actions(project, "run")
    assert [(a["actor"], a["outcome"], a["run_id"]) for a in recorded] == [
        (ACTOR, "REQUESTED", run["run_id"]) for run in found
    ]


def test_a_failed_date_stops_the_backfill_with_the_command_that_resumes_it(
    project: ProjectOnDisk, cli: Cli
) -> None:
    daily(project, fail_on=("2026-01-02",))
    code, document = backfill(cli, "2026-01-01:2026-01-03")

    assert code == ExitCode.INCOMPLETE
    resume = "etl-craft backfill --pipeline daily --from 2026-01-02 --to 2026-01-03 --reason 'reload January'"
    assert document["resume_command"] == resume
    assert "1 of 3 date(s) finished" in str(document["message"])
    assert "ended FAILED" in str(document["message"])
    assert [(str(r["run_date"])[:10], r["status"]) for r in runs(project)] == [
        ("2026-01-01", "SUCCESS"),
        ("2026-01-02", "FAILED"),
    ]
    # The command it gives resumes the backfill from the failed date once the cause is fixed.
    project.migrate(
        "0002_fix.sql",
        "UPDATE CFG_TASK_PARAMETERS SET PARAMETER_VALUE = '{}' WHERE PARAMETER_NAME = 'INPUT_PARAMS';",
    )
    code, document = backfill(cli, "2026-01-02:2026-01-03")
    assert code == 0, document
    assert [(str(r["run_date"])[:10], r["status"]) for r in runs(project)][2:] == [
        ("2026-01-02", "SUCCESS"),
        ("2026-01-03", "SUCCESS"),
    ]


def test_a_backfill_is_refused_while_a_manual_run_is_live(project: ProjectOnDisk, cli: Cli) -> None:
    daily(project)
    manual = project.new_run("daily", "manual:live")
    code, document = backfill(cli, "2026-01-01:2026-01-02")

    assert code == ExitCode.INCOMPLETE
    message = str(document["message"])
    assert f"MANUAL run {manual} (key manual:live" in message
    assert f"etl-craft cancel --pipeline daily --run {manual}" in message
    assert "0 of 2 date(s) finished" in message
    assert document["resume_command"] == (
        "etl-craft backfill --pipeline daily --from 2026-01-01 --to 2026-01-02 "
        "--reason 'reload January'"
    )
    assert [run["kind"] for run in runs(project)] == ["MANUAL"]
    (refused,) = actions(project, "run")
    assert (refused["actor"], refused["outcome"], refused["exit_code"]) == (
        ACTOR,
        "REFUSED",
        ExitCode.RUN_STATE,
    )


def test_a_manual_run_does_not_take_over_a_live_backfill_run(
    project: ProjectOnDisk, cli: Cli
) -> None:
    daily(project)
    with project.engine.transaction(TESTER) as conn:
        backfilling = create_run(
            conn,
            pipeline_id=project.pipeline_id("daily"),
            run_key="backfill:2026-01-01:test",
            trigger_kind=TriggerKind.BACKFILL,
            run_date=date(2026, 1, 1),
            actor=TESTER,
        )
        admit_run(conn, backfilling, SYSTEM)
    done = cli("run", "--pipeline_code", "daily")

    assert done.code == ExitCode.RUN_STATE
    assert f"BACKFILL run {backfilling} (key backfill:2026-01-01:test" in done.err
    assert "a new run waits until it ends" in done.err
    assert [(run["kind"], run["status"]) for run in runs(project)] == [("BACKFILL", "IN-PROGRESS")]
    assert rows(project, "SELECT ATTEMPT_ID FROM AUD_TASK_ATTEMPTS") == []
