"""etl-craft cancel: queued attempts end at once, running ones are stopped by their supervisor."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import ExitCode
from etl_craft.enginedb.transitions import create_task_run, queue_attempt
from tests.fixtures.metadata import TESTER
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.control.conftest import (
    ACTOR,
    Cli,
    actions,
    cli_process,
    finished,
    interventions,
    one,
    rows,
    run_status,
)
from tests.integration.control.test_mark_and_reopen import FOREIGN_OWNER, _claimed_elsewhere
from tests.integration.running.test_supervisor_sql import CHAIN

HANG = """
import os
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    Path(context.input_params["pid_file"]).write_text(str(os.getpid()))
    while True:  # blocks until something stops the process
        time.sleep(0.1)
"""


@pytest.fixture
def orders(project: ProjectOnDisk) -> ProjectOnDisk:
    project.migrate("0001_orders.sql", CHAIN)
    return project


def hanging_pipeline(project: ProjectOnDisk, pid_file: Path) -> None:
    scripts = project.root / "ingestion_scripts"
    scripts.mkdir(exist_ok=True)
    (scripts / "hang.py").write_text(HANG)
    project.migrate(
        "0001_hang.sql",
        f"""
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
        SELECT PROJECT_ID, 'hang' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'pull', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'hang';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT TASK_ID, x.N, x.V FROM CFG_TASKS, (
          SELECT 'SCRIPT' AS N, 'hang.py' AS V
          UNION ALL SELECT 'INPUT_PARAMS', '{{"pid_file": "{pid_file}"}}') x
         WHERE TASK_CODE = 'pull';
        """,
    )


def test_cancel_with_only_queued_attempts_ends_the_run_at_once(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    run_id = orders.new_run("orders")
    task_id = one(orders, "SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = 'land'")
    with orders.engine.transaction(TESTER) as conn:
        queued = queue_attempt(
            conn,
            create_task_run(conn, run_id, task_id, TESTER),
            TESTER,
            slot_kind=SlotKind.WAREHOUSE,
        )

    done = cli.json("cancel", "--pipeline_code", "orders", "--reason", "wrong day")

    assert done.code == 0, done.err
    assert done.document()["pending_attempts"] == []
    ended = rows(
        orders,
        "SELECT STATUS AS status, ENDED_BY AS ended_by FROM AUD_PIPELINES_RUN_LOG "
        "WHERE PIPELINE_RUN_ID = :r",
        r=run_id,
    )
    assert ended == [{"status": "CANCELLED", "ended_by": ACTOR}]
    attempt = one(
        orders, "SELECT STATUS FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a", a=queued.attempt_id
    )
    assert attempt == "CANCELLED"
    assert interventions(orders, run_id) == [
        ("CANCEL", None, "IN-PROGRESS", "CANCELLED", "wrong day", ACTOR)
    ]
    (action,) = actions(orders, "cancel")
    assert (action["actor"], action["outcome"], action["run_id"]) == (ACTOR, "REQUESTED", run_id)


def test_cancel_of_a_running_attempt_asks_its_owner_and_says_so(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    run_id = orders.new_run("orders")
    attempt_id = _claimed_elsewhere(orders, run_id, "land")

    done = cli("cancel", "--pipeline_code", "orders", "--reason", "stop it")

    assert done.code == 0, done.err
    assert f"attempt {attempt_id} (CLAIMED, owner {FOREIGN_OWNER})" in done.out
    assert "supervising the run stops them" in done.out
    assert run_status(orders, run_id) == "IN-PROGRESS"
    requested = one(
        orders,
        "SELECT CANCEL_REQUESTED_AT FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a",
        a=attempt_id,
    )
    assert requested is not None
    assert interventions(orders, run_id)[0][0] == "CANCEL"


def test_cancel_of_an_ended_run_is_refused_naming_its_status(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    run_id = orders.new_run("orders")
    cli("mark", "--pipeline_code", "orders", "--status", "SUCCESS", "--reason", "done")

    done = cli("cancel", "--pipeline_code", "orders", "--run-id", str(run_id), "--reason", "x")

    assert done.code == ExitCode.RUN_STATE
    assert f"run {run_id} of orders has ended SUCCESS" in done.err
    assert actions(orders, "cancel")[-1]["outcome"] == "REFUSED"


def test_cancel_from_a_second_process_stops_the_running_task_and_ends_the_run(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    pid_file = tmp_path / "task.pid"
    hanging_pipeline(project, pid_file)
    owner = cli_process(project, "run", "--pipeline_code", "hang")
    try:
        wait_for(pid_file.exists, "the task process to start its script")
        task_pid = int(pid_file.read_text())
        canceller = finished(
            cli_process(project, "cancel", "--pipeline_code", "hang", "--reason", "hung")
        )
        assert canceller.code == 0, canceller.err
        assert "supervising the run stops them" in canceller.out

        def cancelled() -> bool:
            states = rows(
                project,
                "SELECT r.STATUS AS run, a.STATUS AS attempt FROM AUD_PIPELINES_RUN_LOG r "
                "JOIN AUD_TASK_RUN_LOG t ON t.PIPELINE_RUN_ID = r.PIPELINE_RUN_ID "
                "JOIN AUD_TASK_ATTEMPTS a ON a.TASK_RUN_ID = t.TASK_RUN_ID",
            )
            return states == [{"run": "CANCELLED", "attempt": "CANCELLED"}]

        wait_for(cancelled, "the attempt and the run to end CANCELLED")
        ran = finished(owner)
    finally:
        if owner.poll() is None:
            owner.kill()
    assert ran.code != 0
    assert not _alive(task_pid)
    assert one(project, "SELECT REQUESTED_BY FROM AUD_RUN_INTERVENTIONS") == ACTOR


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2 :].split()[0] != "Z"
