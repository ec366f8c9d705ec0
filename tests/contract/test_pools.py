"""The pool contract (S5.J), over the local provider and the queue provider with workers,
each running its task processes from the project folder and from pinned bundles.

Every case runs real processes on a PostgreSQL Engine DB: `etl-craft server` with
`--pool-provider local` (the overseer's own task processes), or `--pool-provider queue` with
`etl-craft worker` agents claiming from the queue. The "owner" of an attempt is the leading
server (local) or the worker that claimed it (queue).
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator

import pytest

from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import AttemptStatus, Handler, SlotKind
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb.transitions import (
    AttemptOutcome,
    finish_attempt,
)
from etl_craft.pools.base import AttemptSpec, HandleStatus, Pool
from etl_craft.pools.local import LocalPool
from etl_craft.scheduling.driver import RunDriver, Step
from etl_craft_overseer.queue_pool import QueuePool
from tests.chaos.harness import rows, scalar
from tests.fixtures.metadata import TESTER
from tests.fixtures.processes import Processes, task_processes
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.worker.queueing import (
    migrate,
    python_pipeline,
    queue_run,
    release,
    start_worker,
    starts,
)

Owner = subprocess.Popen[bytes]


@pytest.fixture(autouse=True, params=["folder", "bundles"])
def files(request: pytest.FixtureRequest, pg_project: ProjectOnDisk) -> Iterator[str]:
    """Where task processes read the project's files. Under "bundles" each run pins a bundle
    published just before it, and the folder's scripts are then made to fail: an attempt that
    read the folder instead of its bundle would fail its case."""
    if request.param == "folder":
        yield "folder"
        return
    pg_project.use_artifacts((pg_project.root.parent / "artifacts").as_uri())
    published = pg_project.publish_bundle

    def publish_then_break_the_folder() -> int:
        bundle_id = published()
        for script in (pg_project.root / "ingestion_scripts").glob("*.py"):
            script.write_text(f"raise SystemExit('{script.name} ran from the project folder')\n")
        return bundle_id

    pg_project.publish_bundle = publish_then_break_the_folder  # type: ignore[method-assign]
    yield "bundles"
    unpinned = rows(
        pg_project, "SELECT PIPELINE_RUN_ID FROM AUD_PIPELINES_RUN_LOG WHERE BUNDLE_ID IS NULL"
    )
    assert unpinned == [], f"runs that pinned no bundle: {unpinned}"


@pytest.fixture(params=["local", "queue"])
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def start_owner(processes: Processes, project: ProjectOnDisk, provider: str) -> tuple[Owner, str]:
    """Start what owns attempts under ``provider``; returns the process and its owner id."""
    if provider == "queue":
        return start_worker(processes, project, "--ingestion-slots", "4")
    server = processes.start(project, "server", "--pool-provider", "local", "--standby")

    def leads() -> str | None:
        assert server.poll() is None, f"the server exited with code {server.returncode}"
        found = rows(
            project,
            "SELECT OVERSEER_ID FROM AUD_OVERSEERS WHERE PID = :p AND STOPPED_AT IS NULL",
            p=server.pid,
        )
        return str(found[0][0]) if found else None

    return server, wait_for(leads, "the server to lead")


def start_services(processes: Processes, project: ProjectOnDisk, provider: str) -> str:
    """The overseer, and under the queue provider one worker; the id of the attempts' owner."""
    if provider == "queue":
        processes.start(project, "server", "--pool-provider", "queue")
    return start_owner(processes, project, provider)[1]


def run_status(project: ProjectOnDisk, run_id: int) -> str:
    return str(
        scalar(
            project, "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r", r=run_id
        )
    )


def attempts_of(project: ProjectOnDisk, task: str) -> list[tuple[str, str]]:
    return [
        (str(status), str(owner))
        for status, owner in rows(
            project,
            "SELECT a.STATUS, a.OWNER_ID FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
            "ON t.TASK_RUN_ID = a.TASK_RUN_ID JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
            "WHERE k.TASK_CODE = :t ORDER BY a.ATTEMPT_ID",
            t=task,
        )
    ]


def retries(task: str, count: int = 1) -> str:
    return (
        "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) "
        f"SELECT TASK_ID, 'RETRIES', '{count}' FROM CFG_TASKS WHERE TASK_CODE = '{task}';\n"
        "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) "
        f"SELECT TASK_ID, 'RETRY_DELAY_SECONDS', '0' FROM CFG_TASKS WHERE TASK_CODE = '{task}';"
    )


def chain(project: ProjectOnDisk, pipeline: str, first: str, then: str) -> None:
    migrate(
        project,
        f"{pipeline}_chain",
        "INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID) SELECT d.TASK_ID, "
        f"u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u WHERE d.TASK_CODE = '{then}' "
        f"AND u.TASK_CODE = '{first}';",
    )


def in_process_pool(project: ProjectOnDisk, provider: str) -> Pool:
    if provider == "queue":
        return QueuePool(project.engine)
    slots = {SlotKind.INGESTION: 2, SlotKind.WAREHOUSE: 2}
    return LocalPool(project.engine, project.owner_settings(), slots)


def test_an_attempt_submitted_twice_starts_one_process(
    pg_project: ProjectOnDisk, processes: Processes, provider: str
) -> None:
    python_pipeline(pg_project, "once", ["only"])
    release(pg_project)  # the script logs its start and returns at once
    attempt_id = queue_run(pg_project, "once", ["only"])["only"]
    pool = in_process_pool(pg_project, provider)
    spec = AttemptSpec(attempt_id, 0, "once", "only", 1, Handler.PYTHON, SlotKind.INGESTION, None)

    assert pool.status(attempt_id + 1000) is HandleStatus.UNKNOWN
    assert pool.submit(spec) == attempt_id
    assert pool.submit(spec) == attempt_id
    if provider == "queue":
        start_worker(processes, pg_project)

    def ended() -> bool:
        pool.poll()
        return pool.status(attempt_id) is HandleStatus.ENDED

    wait_for(ended, "the attempt to end")
    assert [attempt for attempt, _ in starts(pg_project)] == [attempt_id]
    assert rows(pg_project, "SELECT ATTEMPT_ID, STATUS FROM AUD_TASK_ATTEMPTS") == [
        (attempt_id, "SUCCESS")
    ]
    assert pool.status(attempt_id + 1000) is HandleStatus.UNKNOWN


def test_an_owner_killed_with_kill_9_loses_its_attempt_which_another_owner_retries(
    pg_project: ProjectOnDisk, processes: Processes, provider: str
) -> None:
    python_pipeline(pg_project, "killed", ["held"])
    migrate(pg_project, "killed_retries", retries("held"))
    if provider == "queue":
        processes.start(pg_project, "server", "--pool-provider", "queue")
    victim, victim_id = start_owner(processes, pg_project, provider)
    run_id = pg_project.queued_run("killed", run_key=f"manual:{'killed'}")
    wait_for(lambda: len(starts(pg_project)) == 1, "the attempt to start under the first owner")
    successor, successor_id = (
        start_worker(processes, pg_project) if provider == "queue" else (None, "")
    )
    if provider == "local":
        successor = processes.start(pg_project, "server", "--pool-provider", "local", "--standby")

    victim.send_signal(signal.SIGKILL)
    victim.wait()
    wait_for(
        lambda: attempts_of(pg_project, "held")[:1] == [("LOST", victim_id)],
        "the attempt to be declared LOST once its lease expired",
    )
    release(pg_project)
    wait_for(lambda: run_status(pg_project, run_id) == "SUCCESS", "the retry to succeed")

    found = attempts_of(pg_project, "held")
    assert [status for status, _ in found] == ["LOST", "SUCCESS"]
    assert found[0][1] == victim_id
    assert found[1][1] != victim_id
    if provider == "queue":
        assert found[1][1] == successor_id
    else:
        assert successor is not None
        assert f":{successor.pid}:" in found[1][1]
    assert task_processes({pg_project.root}) == []


def test_a_claim_whose_owner_dies_before_the_process_runs_is_reconciled_not_run_twice(
    pg_project: ProjectOnDisk, processes: Processes, provider: str
) -> None:
    python_pipeline(pg_project, "unacked", ["held"])
    migrate(pg_project, "unacked_retries", retries("held"))
    release(pg_project)
    if provider == "queue":
        processes.start(pg_project, "server", "--pool-provider", "queue")
        victim = processes.start(pg_project, "worker", fault="after_claim:kill")
    else:
        victim = processes.start(pg_project, "server", fault="after_claim:kill")
    run_id = pg_project.queued_run("unacked", run_key=f"manual:{'unacked'}")
    assert victim.wait(timeout=60) == -signal.SIGKILL
    assert starts(pg_project) == []  # claimed, never started

    start_owner(processes, pg_project, provider)
    wait_for(lambda: run_status(pg_project, run_id) == "SUCCESS", "the retry to succeed")

    assert [status for status, _ in attempts_of(pg_project, "held")] == ["LOST", "SUCCESS"]
    assert len(starts(pg_project)) == 1


def test_an_overseer_restarted_while_attempts_run_loses_and_doubles_nothing(
    pg_project: ProjectOnDisk, processes: Processes, provider: str
) -> None:
    python_pipeline(pg_project, "restarted", ["held", "quick_after"])
    chain(pg_project, "restarted", "held", "quick_after")
    owner = start_services(processes, pg_project, provider)
    run_id = pg_project.queued_run("restarted", run_key=f"manual:{'restarted'}")
    wait_for(lambda: len(starts(pg_project)) == 1, "the held attempt to run")
    [leader] = rows(pg_project, "SELECT PID FROM AUD_OVERSEERS WHERE STOPPED_AT IS NULL")
    server = next(p for p in processes.started if p.pid == leader[0])

    # SIGTERM: the overseer admits nothing more and gives running local attempts their grace.
    server.send_signal(signal.SIGTERM)
    release(pg_project)
    assert processes.finish(server).code == 0
    start_services_again = processes.start(
        pg_project, "server", "--pool-provider", "local" if provider == "local" else "queue"
    )
    wait_for(lambda: run_status(pg_project, run_id) == "SUCCESS", "the run to finish")

    assert start_services_again.poll() is None
    held, after = attempts_of(pg_project, "held"), attempts_of(pg_project, "quick_after")
    assert [status for status, _ in held] == ["SUCCESS"]
    assert [status for status, _ in after] == ["SUCCESS"]
    if provider == "queue":
        assert held[0][1] == owner  # the worker kept its attempt across the restart
    assert len(starts(pg_project)) == 1


def test_a_late_completion_from_a_lost_attempt_is_rejected(
    pg_project: ProjectOnDisk, processes: Processes, provider: str
) -> None:
    python_pipeline(pg_project, "late", ["held"])
    if provider == "queue":
        processes.start(pg_project, "server", "--pool-provider", "queue")
    victim, victim_id = start_owner(processes, pg_project, provider)
    pg_project.queued_run("late", run_key=f"manual:{'late'}")
    wait_for(lambda: len(starts(pg_project)) == 1, "the attempt to run")
    victim.send_signal(signal.SIGKILL)
    victim.wait()

    def lost() -> bool:
        processes.run(pg_project, "reconcile")
        return attempts_of(pg_project, "held") == [("LOST", victim_id)]

    wait_for(lost, "the attempt to be declared LOST")
    [(attempt_id,)] = rows(pg_project, "SELECT ATTEMPT_ID FROM AUD_TASK_ATTEMPTS")
    with (
        pytest.raises(StaleTransitionError, match="LOST"),
        pg_project.engine.transaction(SYSTEM) as conn,
    ):
        finish_attempt(
            conn,
            attempt_id,
            SYSTEM,
            owner_id=victim_id,
            outcome=AttemptOutcome(AttemptStatus.SUCCESS),
        )
    [(status, message)] = rows(pg_project, "SELECT STATUS, ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS")
    assert status == "LOST"
    assert victim_id in message
    assert task_processes({pg_project.root}) == []  # the orphan was stopped before it was lost


def test_cancellation_reaches_the_owner_and_is_acknowledged(
    pg_project: ProjectOnDisk, processes: Processes, provider: str
) -> None:
    python_pipeline(pg_project, "stopped", ["held"])
    owner = start_services(processes, pg_project, provider)
    run_id = pg_project.queued_run("stopped", run_key=f"manual:{'stopped'}")
    wait_for(lambda: len(starts(pg_project)) == 1, "the attempt to run")

    cancel = processes.run(
        pg_project, "cancel", "--pipeline_code", "stopped", "--run-id", str(run_id), "--reason", "x"
    )

    assert cancel.code == 0, cancel.output
    wait_for(lambda: run_status(pg_project, run_id) == "CANCELLED", "the run to end CANCELLED")
    [(status, by, asked, acked, message)] = rows(
        pg_project,
        "SELECT STATUS, OWNER_ID, CANCEL_REQUESTED_AT, CANCEL_ACKNOWLEDGED_AT, ERROR_MESSAGE "
        "FROM AUD_TASK_ATTEMPTS",
    )
    assert (status, by) == ("CANCELLED", owner)
    assert asked is not None
    assert acked >= asked
    # Both providers read the request the same way and say when it came and who acted on it.
    assert str(message).startswith("cancelled on request (at ")
    assert str(message).endswith(f"{owner} stopped its task process")
    assert task_processes({pg_project.root}) == []


def test_attempts_never_overlap_beyond_the_pipeline_limit(
    pg_project: ProjectOnDisk, processes: Processes, provider: str
) -> None:
    tasks = [f"quick_{n:02d}" for n in range(24)]
    python_pipeline(pg_project, "wide", tasks)
    migrate(
        pg_project,
        "wide_limit",
        "UPDATE CFG_PIPELINES SET MAX_PARALLEL_TASKS = 3 WHERE PIPELINE_CODE = 'wide';",
    )
    start_services(processes, pg_project, provider)
    run_id = pg_project.queued_run("wide", run_key=f"manual:{'wide'}")
    wait_for(lambda: run_status(pg_project, run_id) == "SUCCESS", "the run to succeed", 120)

    spans = rows(pg_project, "SELECT QUEUED_AT, ENDED_AT FROM AUD_TASK_ATTEMPTS")
    assert len(spans) == 24
    # From the rows themselves: at no instant were more than 3 attempts queued or running.
    events = sorted([(queued, 1) for queued, _ in spans] + [(ended, -1) for _, ended in spans])
    live, most = 0, 0
    for _, change in events:
        live += change
        most = max(most, live)
    assert most == 3


def test_draining_finishes_what_runs_and_starts_nothing_new(
    pg_project: ProjectOnDisk, processes: Processes, provider: str
) -> None:
    python_pipeline(pg_project, "drained", ["held", "quick_next"])
    chain(pg_project, "drained", "held", "quick_next")
    start_services(processes, pg_project, provider)
    run_id = pg_project.queued_run("drained", run_key=f"manual:{'drained'}")
    wait_for(lambda: len(starts(pg_project)) == 1, "the held attempt to run")
    if provider == "queue":
        [(pid,)] = rows(pg_project, "SELECT PID FROM AUD_WORKERS")
    else:
        [(pid,)] = rows(pg_project, "SELECT PID FROM AUD_OVERSEERS")
    owner = next(p for p in processes.started if p.pid == pid)

    owner.send_signal(signal.SIGTERM)
    release(pg_project)
    assert processes.finish(owner).code == 0

    assert attempts_of(pg_project, "held")[0][0] == "SUCCESS"
    assert attempts_of(pg_project, "quick_next") in ([], [("QUEUED", "None")])
    assert run_status(pg_project, run_id) == "IN-PROGRESS"


def test_the_ready_set_queues_within_the_limit_under_a_burst_of_a_thousand(
    pg_project: ProjectOnDisk,
) -> None:
    statements = [
        "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE, MAX_PARALLEL_TASKS) "
        "SELECT PROJECT_ID, 'burst', 5 FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';",
        "INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) SELECT p.PIPELINE_ID, "
        "'t' || CAST(n AS TEXT), 'PYTHON' FROM CFG_PIPELINES p, generate_series(1, 1000) n "
        "WHERE p.PIPELINE_CODE = 'burst';",
    ]
    migrate(pg_project, "burst", "\n".join(statements))
    run_id = pg_project.new_run("burst")
    driver = RunDriver(pg_project.engine, run_id, pg_project.owner_settings(), TESTER)

    first, _ = driver.step()
    again, _ = driver.step()

    assert (first, again) == (Step.APPLIED, Step.BUSY)
    assert rows(pg_project, "SELECT STATUS, count(*) FROM AUD_TASK_ATTEMPTS GROUP BY STATUS") == [
        ("QUEUED", 5)
    ]
    # The other 995 hold nothing: no task run, no attempt, until a place frees up.
    assert scalar(pg_project, "SELECT count(*) FROM AUD_TASK_RUN_LOG") == 5
