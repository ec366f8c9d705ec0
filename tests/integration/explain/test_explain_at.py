"""etl-craft explain --at: a task as it stood at moments taken from its run's own records,
before, during and after a gate wait, a retry and a mark, on SQLite and PostgreSQL Engine DBs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from etl_craft.core.errors import ExitCode
from etl_craft.core.time import as_utc
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import ACTOR, Cli, mark
from tests.integration.explain.test_explain_cli import rerun_command
from tests.integration.running.test_gates import CROSS, supervise
from tests.integration.running.test_ready_set import QUICK, tasks_sql
from tests.integration.running.test_supervisor_scripts import FLAKY, pipeline


def explain_at(
    cli: Cli, pipeline_code: str, task: str, run_id: int, at: datetime
) -> dict[str, Any]:
    done = cli.json(
        "explain",
        "--pipeline_code",
        pipeline_code,
        "--task_code",
        task,
        "--run-id",
        str(run_id),
        "--at",
        at.isoformat(),
    )
    assert done.code == 0, done.err
    document = done.document()
    assert document["at"] == at.isoformat()
    return document


def present(cli: Cli, pipeline_code: str, task: str, run_id: int) -> dict[str, Any]:
    done = cli.json(
        "explain", "--pipeline_code", pipeline_code, "--task_code", task, "--run-id", str(run_id)
    )
    assert done.code == 0, done.err
    return done.document()


def told(document: dict[str, Any]) -> tuple[str, str | None, int, str]:
    return (document["state"], document["task_status"], document["attempts"], document["sentence"])


def moment(value: object) -> datetime:
    found = as_utc(value)  # type: ignore[arg-type]
    assert found is not None
    return found


def utc(at: datetime) -> str:
    return f"{at:%Y-%m-%d %H:%M:%S} UTC"


@dataclass(frozen=True)
class Attempt:
    number: int
    queued_at: datetime
    started_at: datetime
    ended_at: datetime
    not_before: datetime | None
    owner_id: str
    error: str | None


def attempts_of(project: ProjectOnDisk, run_id: int, task: str) -> list[Attempt]:
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT a.ATTEMPT_NUMBER, a.QUEUED_AT, a.STARTED_AT, a.ENDED_AT, a.NOT_BEFORE, "
            "a.OWNER_ID, a.ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS a "
            "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
            "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
            "WHERE t.PIPELINE_RUN_ID = :r AND k.TASK_CODE = :task ORDER BY a.ATTEMPT_NUMBER",
            r=run_id,
            task=task,
        ).all()
    return [
        Attempt(
            row[0],
            moment(row[1]),
            moment(row[2]),
            moment(row[3]),
            as_utc(row[4]),
            str(row[5]),
            None if row[6] is None else str(row[6]).splitlines()[0],
        )
        for row in rows
    ]


def run_times(project: ProjectOnDisk, run_id: int) -> tuple[datetime, datetime | None]:
    with project.engine.read() as conn:
        queued, ended = execute(
            conn,
            "SELECT QUEUED_AT, END_DATE FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r",
            r=run_id,
        ).one()
    return moment(queued), as_utc(ended)


def test_explain_at_before_during_and_after_a_retry(
    project: ProjectOnDisk, cli: Cli, tmp_path: Path
) -> None:
    (project.root / "ingestion_scripts").mkdir()
    (project.root / "ingestion_scripts" / "flaky.py").write_text(FLAKY)
    project.migrate("0001_ingest.sql", pipeline(tmp_path / "marker", fail_times=1, retries=1))
    run = cli.json("run", "--pipeline_code", "ingest")
    assert run.code == 0, run.err
    run_id = int(run.document()["run_id"])
    queued, ended = run_times(project, run_id)
    first, second = attempts_of(project, run_id, "pull")
    assert (first.error or "").startswith(
        "script flaky.py raised RuntimeError: source not ready (failure 1); see the attempt log"
    )
    assert (second.error, second.not_before) == (None, first.ended_at)
    again = rerun_command(run_id, "pull").replace("orders", "ingest")
    settings = "(RETRIES 1, RETRY_DELAY_SECONDS 0, RETRY_BACKOFF 2)"

    assert told(explain_at(cli, "ingest", "pull", run_id, queued)) == (
        "NOT_RUN",
        None,
        0,
        f"pull is ready to start: its dependencies are met; etl-craft run --pipeline "
        f"ingest --run {run_id} starts it if no process supervises the run",
    )
    assert told(explain_at(cli, "ingest", "pull", run_id, first.started_at)) == (
        "RUNNING",
        "IN-PROGRESS",
        1,
        f"pull is running attempt 1 of 2 (owner {first.owner_id}); it settles when the attempt "
        "reports its outcome or its owner stops renewing its lease",
    )
    failed = explain_at(cli, "ingest", "pull", run_id, first.ended_at)
    assert told(failed) == (
        "RETRY_SCHEDULED",
        "FAILED",
        1,
        f"pull failed attempt 1 of 2 ({first.error}); attempt 2 starts at "
        f"{utc(first.ended_at)} {settings}",
    )
    assert (failed["latest_error"], failed["retry"]["next_attempt"]) == (first.error, 2)
    assert told(explain_at(cli, "ingest", "pull", run_id, second.started_at)) == (
        "RUNNING",
        "IN-PROGRESS",
        2,
        f"pull is running attempt 2 of 2 (owner {second.owner_id}); it settles when the "
        "attempt reports its outcome or its owner stops renewing its lease",
    )
    assert ended is not None
    after = explain_at(cli, "ingest", "pull", run_id, ended)
    assert told(after) == (
        "SUCCEEDED",
        "SUCCESS",
        2,
        f"pull succeeded on attempt 2 and wrote 5 rows; to run it again: {again}",
    )
    assert {**after, "at": None} == present(cli, "ingest", "pull", run_id)


def test_explain_at_before_during_and_after_a_gate_wait(project: ProjectOnDisk, cli: Cli) -> None:
    (project.root / "ingestion_scripts").mkdir()
    (project.root / "ingestion_scripts" / "quick.py").write_text(QUICK)
    project.migrate(
        "0001_pipelines.sql",
        tasks_sql("up", [("extract", "quick.py", "{}")], [])
        + tasks_sql("down", [("load", "quick.py", "{}")], [])
        + CROSS,
    )
    run_id = project.new_run("down", "manual:down-1")
    assert supervise(project, run_id, wait_minutes=0.02) == "SUCCESS"
    queued, _ = run_times(project, run_id)
    with project.engine.read() as conn:
        first_check, next_check, wait_until, resolved = execute(
            conn,
            "SELECT FIRST_CHECK_AT, NEXT_CHECK_AT, WAIT_UNTIL, RESOLVED_AT FROM AUD_GATE_WAITS "
            "WHERE PIPELINE_RUN_ID = :r",
            r=run_id,
        ).one()
        decided, reason = execute(
            conn,
            "SELECT DECIDED_AT, REASON FROM AUD_GATE_DECISIONS WHERE PIPELINE_RUN_ID = :r",
            r=run_id,
        ).one()
        skipped = execute(
            conn, "SELECT START_DATE FROM AUD_TASK_RUN_LOG WHERE PIPELINE_RUN_ID = :r", r=run_id
        ).scalar_one()
    assert reason.startswith("gave up after waiting 0.02 minutes for up.extract")
    new_run = "a new run of down judges its gates again"

    before = explain_at(cli, "down", "load", run_id, queued)
    assert told(before) == (
        "NOT_RUN",
        None,
        0,
        "load waits for up.extract (SUCCESS dependency), which no gate has judged yet",
    )
    assert (before["gate_waits"], before["gate_decisions"]) == ([], [])
    during = explain_at(cli, "down", "load", run_id, moment(first_check))
    assert told(during) == (
        "WAITING_ON_GATE",
        None,
        0,
        f"load waits on a gate on up.extract (SUCCESS dependency); the gate looks again at "
        f"{utc(moment(next_check))} and gives up at {utc(moment(wait_until))}",
    )
    assert [w["resolved_at"] for w in during["gate_waits"]] == [None]
    assert during["gate_decisions"] == []
    was_skipped = (
        "SKIPPED",
        "SKIPPED",
        0,
        f"load was skipped because the gate on up.extract decided UNSATISFIED: {reason}; {new_run}",
    )
    judged = explain_at(cli, "down", "load", run_id, moment(decided))
    # PostgreSQL stamps the decision and the skip it causes with their transaction's moment;
    # SQLite's clock moves on between the two statements, so there the skip comes just after.
    assert told(judged) == (
        was_skipped
        if moment(skipped) == moment(decided)
        else (
            "UNSATISFIABLE",
            None,
            0,
            f"load cannot run because the gate on up.extract decided UNSATISFIED: {reason}, so "
            f"run {run_id} skips it; {new_run}",
        )
    )
    after = explain_at(cli, "down", "load", run_id, max(moment(resolved), moment(skipped)))
    assert told(after) == was_skipped
    assert [(g["result"], g["reason"]) for g in after["gate_decisions"]] == [
        ("UNSATISFIED", reason)
    ]
    ended = explain_at(cli, "down", "load", run_id, run_times(project, run_id)[1] or queued)
    assert (told(ended), ended["run_status"]) == (was_skipped, "SUCCESS")
    assert {**ended, "at": None} == present(cli, "down", "load", run_id)


ORDERS_LAND = ("explain", "--pipeline_code", "orders", "--task_code", "land", "--run-id")


def test_explain_at_before_at_and_after_a_mark(
    project: ProjectOnDisk, cli: Cli, failed_run: int
) -> None:
    run_id = failed_run
    (land,) = attempts_of(project, run_id, "land")
    mark(cli, run_id, "land", "SUCCESS", "--rows", "3")
    with project.engine.read() as conn:
        reopened, mark_at = (
            moment(row[0])
            for row in execute(
                conn,
                "SELECT REQUESTED_AT FROM AUD_RUN_INTERVENTIONS WHERE PIPELINE_RUN_ID = :r "
                "ORDER BY INTERVENTION_ID",
                r=run_id,
            ).all()
        )
    before_mark = reopened - timedelta(microseconds=1)
    land_failed = (
        f"land failed on attempt 1 of 1: {land.error}; fix the cause and rerun it with "
        f"{rerun_command(run_id, 'land')}"
    )

    before = explain_at(cli, "orders", "land", run_id, before_mark)
    assert (told(before), before["run_status"]) == (("FAILED", "FAILED", 1, land_failed), "FAILED")
    text = cli(*ORDERS_LAND, str(run_id), "--at", before_mark.isoformat())
    assert text.code == 0, text.err
    assert text.out.splitlines()[:4] == [
        f"land in run {run_id} of orders ({before['run_key']}) at {utc(before_mark)}: FAILED",
        f"  {land_failed}",
        "  run: FAILED, paused: no, cancel pending: no",
        f"  task: FAILED, attempts 1, latest error: {land.error}",
    ]
    at_mark = explain_at(cli, "orders", "land", run_id, mark_at)
    land_marked = (
        "SUCCEEDED",
        "SUCCESS",
        1,
        f"land was marked SUCCESS by {ACTOR} (was FAILED): loaded by hand; to run it again: "
        f"{rerun_command(run_id, 'land')}",
    )
    assert (told(at_mark), at_mark["run_status"]) == (land_marked, "IN-PROGRESS")
    assert told(present(cli, "orders", "land", run_id)) == land_marked

    skipped = explain_at(cli, "orders", "summary", run_id, before_mark)
    assert told(skipped) == (
        "SKIPPED",
        "SKIPPED",
        0,
        f"summary was skipped because land failed; rerun land with {rerun_command(run_id, 'land')}",
    )
    (queued,) = attempts_of_queued(project, run_id, "summary")
    runnable = explain_at(cli, "orders", "summary", run_id, queued)
    assert told(runnable) == (
        "QUEUED",
        "IN-PROGRESS",
        1,
        f"summary attempt 1 is queued and starts when run {run_id} has a free slot",
    )
    assert [(d["upstream"], d["upstream_status"], d["met"]) for d in runnable["dependencies"]] == [
        ("land", "SUCCESS", True)
    ]


def attempts_of_queued(project: ProjectOnDisk, run_id: int, task: str) -> list[datetime]:
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT a.QUEUED_AT FROM AUD_TASK_ATTEMPTS a "
            "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
            "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
            "WHERE t.PIPELINE_RUN_ID = :r AND k.TASK_CODE = :task ORDER BY a.ATTEMPT_NUMBER",
            r=run_id,
            task=task,
        ).all()
    return [moment(row[0]) for row in rows]


def test_explain_at_refuses_a_malformed_time_and_a_moment_before_the_run(
    cli: Cli, failed_run: int, project: ProjectOnDisk
) -> None:
    queued, _ = run_times(project, failed_run)
    args = ORDERS_LAND

    malformed = cli(*args, str(failed_run), "--at", "yesterday at noon")
    assert malformed.code == ExitCode.USAGE
    assert (
        "--at 'yesterday at noon' is not an ISO 8601 moment; expected a date and time such as "
        "2026-11-30T06:15:00+01:00, or 2026-11-30 05:15:00 read as UTC: correct the time"
    ) in malformed.err

    early = queued - timedelta(seconds=1)
    before = cli(*args, str(failed_run), "--at", early.strftime("%Y-%m-%d %H:%M:%S.%f"))
    assert before.code == ExitCode.USAGE
    assert (
        f"--at {utc(early)} is before run {failed_run} of orders existed (it was queued "
        f"{utc(queued)}); name a moment at or after it was queued"
    ) in before.err
