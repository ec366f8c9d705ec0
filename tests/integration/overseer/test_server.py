"""`etl-craft server` as a real process: leadership, admission, runs to their end, shutdown."""

from __future__ import annotations

import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

from etl_craft.core.errors import ExitCode
from tests.chaos.harness import QUICK, held_pipeline, rows, scalar
from tests.fixtures.processes import Processes, task_processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

PAIR = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'pair' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'first', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'pair';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'second', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'pair';
INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
 WHERE d.TASK_CODE = 'second' AND u.TASK_CODE = 'first';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'SCRIPT', 'quick.py' FROM CFG_TASKS WHERE TASK_CODE IN ('first', 'second');
"""


def pair_pipeline(project: ProjectOnDisk, extra: str = "") -> None:
    (project.root / "ingestion_scripts" / "quick.py").write_text(QUICK)
    project.migrate("0001_pair.sql", PAIR + extra)


def overseers(project: ProjectOnDisk) -> list[tuple[str, object]]:
    return [
        (str(row[0]), row[1])
        for row in rows(project, "SELECT OVERSEER_ID, STOPPED_AT FROM AUD_OVERSEERS ORDER BY 1")
    ]


def run_status(project: ProjectOnDisk, run_id: int) -> str:
    return str(
        scalar(
            project, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r", r=run_id
        )
    )


def test_a_server_admits_a_queued_run_runs_it_and_stops_cleanly_on_sigterm(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    pair_pipeline(chaos_project)
    server = processes.start(chaos_project, "server")
    wait_for(lambda: len(overseers(chaos_project)) == 1, "the server to take the lead")
    run_id = chaos_project.queued_run("pair")
    wait_for(lambda: run_status(chaos_project, run_id) == "SUCCESS", "the run to succeed")
    ((leader, _),) = overseers(chaos_project)
    attempts = rows(
        chaos_project,
        "SELECT k.TASK_CODE, a.STATUS, a.OWNER_ID, t.STATUS FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE t.PIPELINE_RUN_ID = :r ORDER BY 1",
        r=run_id,
    )
    assert attempts == [
        ("first", "SUCCESS", leader, "SUCCESS"),
        ("second", "SUCCESS", leader, "SUCCESS"),
    ]
    run = rows(
        chaos_project,
        "SELECT OWNER_ID, START_DATE, END_DATE FROM AUD_PIPELINES_RUN_LOG "
        "WHERE PIPELINE_RUN_ID = :r",
        r=run_id,
    )[0]
    assert run[0] is None
    assert run[1] is not None
    assert run[2] is not None

    server.send_signal(signal.SIGTERM)
    done = processes.finish(server, timeout=60)
    assert done.code == 0, done.output
    ((_, stopped),) = overseers(chaos_project)
    assert stopped is not None


def test_a_second_server_is_refused_naming_the_one_that_leads(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    processes.start(chaos_project, "server")
    wait_for(lambda: len(overseers(chaos_project)) == 1, "the first server to lead")
    ((leader, _),) = overseers(chaos_project)

    second = processes.run(chaos_project, "server")

    assert second.code == ExitCode.RUN_STATE, second.output
    assert f"overseer {leader}" in second.output
    assert "is active" in second.output
    assert len(overseers(chaos_project)) == 1


def test_two_standby_servers_one_leads_and_the_other_finishes_the_run_after_kill_9(
    chaos_project: ProjectOnDisk, processes: Processes, tmp_path: Path
) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    held_pipeline(chaos_project, started, release)
    first = processes.start(chaos_project, "server", "--standby")
    second = processes.start(chaos_project, "server", "--standby")
    wait_for(lambda: len(overseers(chaos_project)) == 1, "one server to lead")
    run_id = chaos_project.queued_run("held")
    wait_for(started.exists, "the held task to start under the leader")
    assert len(overseers(chaos_project)) == 1  # the other stands by
    ((leader, _),) = overseers(chaos_project)
    victim, survivor = (first, second) if f":{first.pid}:" in leader else (second, first)

    victim.send_signal(signal.SIGKILL)
    victim.wait()
    wait_for(lambda: len(overseers(chaos_project)) == 2, "the standby server to take the lead")
    wait_for(lambda: run_status(chaos_project, run_id) == "SUCCESS", "the run to finish")

    successor = next(o for o, _ in overseers(chaos_project) if o != leader)
    assert f":{survivor.pid}:" in successor
    pulls = rows(
        chaos_project,
        "SELECT a.STATUS, a.OWNER_ID FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE k.TASK_CODE = 'pull' ORDER BY a.ATTEMPT_ID",
    )
    # The orphaned first attempt was stopped and declared lost; the retry ran under the successor.
    assert pulls == [("LOST", leader), ("SUCCESS", successor)]
    after = scalar(
        chaos_project,
        "SELECT a.OWNER_ID FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
        "ON t.TASK_RUN_ID = a.TASK_RUN_ID JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE k.TASK_CODE = 'after'",
    )
    assert after == successor
    assert task_processes({chaos_project.root}) == []


def test_missed_daily_ticks_become_runs_that_the_server_runs_one_after_the_other(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    today = datetime.now(UTC).date()
    yesterday = today - timedelta(days=1)
    pair_pipeline(
        chaos_project,
        f"""
        UPDATE CFG_PIPELINES SET RUN_SCHEDULE = '0 0 * * *', SCHEDULE_TIMEZONE = 'UTC',
               SCHEDULE_START_DATE = '{yesterday.isoformat()}', CATCHUP = 'Y',
               MAX_CATCHUP_RUNS = 2
         WHERE PIPELINE_CODE = 'pair';
        """,
    )
    processes.start(chaos_project, "server")

    def settled() -> bool:
        found = rows(chaos_project, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG")
        return len(found) == 2 and all(status == "SUCCESS" for (status,) in found)

    wait_for(settled, "both scheduled runs to succeed")
    found = rows(
        chaos_project,
        "SELECT RUN_KEY, TRIGGER_KIND, RUN_DATE, STATUS FROM AUD_PIPELINES_RUN_LOG "
        "ORDER BY RUN_KEY",
    )
    assert [(key, kind, str(day)[:10], status) for key, kind, day, status in found] == [
        (
            f"schedule:{yesterday.isoformat()}T00:00:00Z",
            "SCHEDULE",
            yesterday.isoformat(),
            "SUCCESS",
        ),
        (f"schedule:{today.isoformat()}T00:00:00Z", "SCHEDULE", today.isoformat(), "SUCCESS"),
    ]
    # One pipeline, one run in progress at a time: the second started after the first ended.
    spans = rows(
        chaos_project,
        "SELECT START_DATE, END_DATE FROM AUD_PIPELINES_RUN_LOG ORDER BY RUN_KEY",
    )
    assert str(spans[1][0]) >= str(spans[0][1])


def test_cancel_reaches_an_attempt_the_server_runs(
    chaos_project: ProjectOnDisk, processes: Processes, tmp_path: Path
) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    held_pipeline(chaos_project, started, release)
    processes.start(chaos_project, "server")
    run_id = chaos_project.queued_run("held")
    wait_for(started.exists, "the held task to start")

    cancel = processes.run(
        chaos_project,
        "cancel",
        "--pipeline_code",
        "held",
        "--run-id",
        str(run_id),
        "--reason",
        "wrong day",
    )

    assert cancel.code == 0, cancel.output
    wait_for(lambda: run_status(chaos_project, run_id) == "CANCELLED", "the run to end CANCELLED")
    pulls = rows(
        chaos_project,
        "SELECT a.STATUS, a.CANCEL_REQUESTED_AT IS NOT NULL, a.CANCEL_ACKNOWLEDGED_AT IS NOT NULL "
        "FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "WHERE t.PIPELINE_RUN_ID = :r",
        r=run_id,
    )
    assert [(status, bool(asked), bool(acked)) for status, asked, acked in pulls] == [
        ("CANCELLED", True, True)
    ]
    assert task_processes({chaos_project.root}) == []


def test_a_run_whose_foreground_caller_was_killed_is_finished_by_the_server(
    chaos_project: ProjectOnDisk, processes: Processes
) -> None:
    pair_pipeline(
        chaos_project,
        """
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT TASK_ID, 'RETRIES', '1' FROM CFG_TASKS WHERE TASK_CODE = 'first';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT TASK_ID, 'RETRY_DELAY_SECONDS', '0' FROM CFG_TASKS WHERE TASK_CODE = 'first';
        """,
    )
    caller = processes.start(
        chaos_project, "run", "--pipeline_code", "pair", fault="after_claim:kill"
    )
    done = processes.finish(caller)
    assert done.code == -signal.SIGKILL, done.output
    # Started only now: a server already leading may admit the caller's QUEUED run first, and
    # the caller then rightly leaves it to the server instead of reaching its claim.
    processes.start(chaos_project, "server")
    wait_for(lambda: len(overseers(chaos_project)) == 1, "the server to lead")

    wait_for(
        lambda: rows(chaos_project, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG") == [("SUCCESS",)],
        "the server to finish the run once the caller's lease expired",
    )
    ((leader, _),) = overseers(chaos_project)
    owners = rows(
        chaos_project,
        "SELECT k.TASK_CODE, a.STATUS, a.OWNER_ID FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID ORDER BY a.ATTEMPT_ID",
    )
    # The caller's claimed attempt was lost with it; its retry and the rest ran under the server.
    assert [(task, status, owner == leader) for task, status, owner in owners] == [
        ("first", "LOST", False),
        ("first", "SUCCESS", True),
        ("second", "SUCCESS", True),
    ]
