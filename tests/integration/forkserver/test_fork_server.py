"""Task processes forked by the owner's fork server: isolated, logged, stoppable, never orphaned."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.fixtures.waiting import wait_for
from tests.integration.running.test_supervisor_sql import supervise

from etl_craft.runtime.identity import process_start
from etl_craft.runtime.starter import Forked, ForkServer, fork_server

PROBE = """
import json, os, subprocess, time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    params = context.input_params
    helper = subprocess.Popen(["sleep", "60"]) if params["sleep"] else None
    facts = {
        "pid": os.getpid(),
        "sid": os.getsid(0),
        "ppid": os.getppid(),
        "helper": helper.pid if helper else None,
        "cmdline": Path("/proc/self/cmdline").read_bytes().decode(),
        "rss": [l for l in Path("/proc/self/status").read_text().splitlines() if "VmRSS" in l],
    }
    Path(params["facts"]).write_text(json.dumps(facts))
    print("probe ran in", os.getpid())
    time.sleep(params["sleep"])
    return ScriptResult(row_count=1)
"""


def pipeline(facts: Path, sleep: int, timeout: int | None) -> str:
    params = json.dumps({"facts": str(facts), "sleep": sleep})
    timeout_row = f"UNION ALL SELECT 'TASK_TIMEOUT_SECONDS', '{timeout}'" if timeout else ""
    return f"""
    INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
    SELECT PROJECT_ID, 'probe' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
    INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
    SELECT PIPELINE_ID, 'look', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'probe';
    INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
    SELECT TASK_ID, x.N, x.V FROM CFG_TASKS,
      (SELECT 'SCRIPT' AS N, 'probe.py' AS V UNION ALL SELECT 'INPUT_PARAMS', '{params}'
       {timeout_row}) x
     WHERE TASK_CODE = 'look';
    """


@pytest.fixture(params=["sqlite", "postgresql"])
def project(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ProjectOnDisk]:
    monkeypatch.setenv("ETL_CRAFT_TASK_START", "fork")
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    (made.root / "ingestion_scripts").mkdir()
    (made.root / "ingestion_scripts" / "probe.py").write_text(PROBE)
    yield made
    made.engine.dispose()


def attempt(project: ProjectOnDisk) -> tuple[str, str, str]:
    with project.engine.read() as conn:
        row = execute(conn, "SELECT STATUS, OUTCOME_SOURCE, LOG_PATH FROM AUD_TASK_ATTEMPTS").one()
    return row[0], row[1], row[2]


def wait_gone(pid: int, what: str) -> None:
    wait_for(lambda: process_start(pid) is None, what, timeout=10)


def test_a_forked_task_runs_in_its_own_session_under_the_fork_server(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    project.migrate("0001_probe.sql", pipeline(tmp_path / "facts.json", sleep=0, timeout=None))
    assert supervise(project, project.new_run("probe")) == "SUCCESS"

    facts = json.loads((tmp_path / "facts.json").read_text())
    assert facts["sid"] == facts["pid"]
    assert facts["ppid"] == fork_server().process.pid != os.getpid()
    assert "-m etl_craft.runtime.child --attempt-id" in facts["cmdline"]
    status, source, log_path = attempt(project)
    assert (status, source) == ("SUCCESS", "CHILD")
    log = Path(log_path).read_text()
    assert f"probe ran in {facts['pid']}" in log
    assert "look succeeded" in log


def test_a_forked_task_past_its_timeout_is_stopped_with_its_process_group(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    project.migrate("0001_probe.sql", pipeline(tmp_path / "facts.json", sleep=60, timeout=1))
    started = time.monotonic()
    assert supervise(project, project.new_run("probe")) == "FAILED"

    assert time.monotonic() - started < 30
    facts = json.loads((tmp_path / "facts.json").read_text())
    assert facts["ppid"] == fork_server().process.pid
    wait_gone(facts["pid"], "the task process to end")
    wait_gone(facts["helper"], "the task's helper process to end")
    assert attempt(project)[0] == "TIMED_OUT"


def test_a_closed_fork_server_exits_once_its_last_child_has_ended(tmp_path: Path) -> None:
    # The child blocks reading its --config, a FIFO, until this test writes to it.
    fifo = tmp_path / "craft-connector.yml"
    os.mkfifo(fifo)
    server = ForkServer()
    argv = ["--attempt-id", "1", "--owner-id", "test", "--config", str(fifo)]
    child = server.start(argv, dict(os.environ), tmp_path / "attempt.log")

    server.close(timeout=0.5)
    assert server.process.poll() is None, "the server left while its child still ran"
    assert process_start(child.pid) is not None
    with fifo.open("w") as writer:
        writer.write("not: [a connector\n")
    server.close(timeout=10)
    assert server.process.returncode == 0
    wait_gone(child.pid, "the forked child to end")
    assert "ConfigurationError" in (tmp_path / "attempt.log").read_text()


def test_two_threads_polling_a_forked_child_both_see_its_exit_code(tmp_path: Path) -> None:
    # An owner's loop and its heartbeat thread poll the same task process. The server hands
    # each exit code out once; unguarded, the thread that missed it overwrote it with None,
    # and the exit was never seen again.
    server = ForkServer()
    try:
        for round_ in range(20):
            child = server.start(["--bogus"], dict(os.environ), tmp_path / f"{round_}.log")
            seen: list[int | None] = []
            threads = [threading.Thread(target=_poll_until_ended, args=(child, seen)) for _ in "ab"]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert seen == [2, 2], f"round {round_}"  # argparse's exit code, seen by both
    finally:
        server.close()


def _poll_until_ended(child: Forked, seen: list[int | None], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while child.poll() is None and time.monotonic() < deadline:
        pass
    seen.append(child.poll())


def test_the_fork_server_exits_when_its_owner_dies(tmp_path: Path) -> None:
    owner_code = (
        "import os, sys, time\n"
        "from etl_craft.runtime.starter import fork_server\n"
        "server = fork_server()\n"
        f"child = server.start(['--bogus'], dict(os.environ), __import__('pathlib').Path("
        f"{str(tmp_path / 'attempt.log')!r}))\n"
        "print(server.process.pid, child.wait(), flush=True)\n"
        "time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", owner_code], stdout=subprocess.PIPE, text=True
    ) as owner:
        assert owner.stdout is not None
        server_pid, child_code = (int(word) for word in owner.stdout.readline().split())
        owner.send_signal(signal.SIGKILL)
    assert child_code == 2  # argparse refused it, as in a fresh interpreter
    log = (tmp_path / "attempt.log").read_text()
    assert "the following arguments are required: --attempt-id" in log
    wait_gone(server_pid, "the fork server to end with its owner")


def test_the_server_says_it_is_ready_before_anything_else() -> None:
    server = ForkServer()
    try:
        before = server.ready
        server.wait_ready()
        assert (before, server.ready) == (False, True)
        # The notice is not taken for a launch reply: nothing waits to be filed as one.
        assert server._launched == []
    finally:
        server.close()


WAREHOUSE_PROBE = """
import json
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    settings = context.warehouse_settings
    Path(context.input_params["facts"]).write_text(json.dumps(settings.path if settings else None))
    return ScriptResult(row_count=0)
"""


def test_a_forked_task_reads_its_project_configuration_again_once_it_changed(
    project: ProjectOnDisk, tmp_path: Path
) -> None:
    # The fork server keeps what the last children read; a task after an edit sees the edit.
    (project.root / "ingestion_scripts" / "probe.py").write_text(WAREHOUSE_PROBE)
    facts = tmp_path / "facts.json"
    project.migrate("0001_probe.sql", pipeline(facts, sleep=0, timeout=None))
    seen: list[str] = []
    for name in ("first.duckdb", "first.duckdb", "second.duckdb"):
        text = project.config.read_text().replace("warehouse.duckdb", name)
        text = text.replace("first.duckdb", name)
        project.config.write_text(text)
        run_id = project.new_run("probe", run_key=f"manual:{len(seen)}")
        assert supervise(project, run_id) == "SUCCESS"
        seen.append(Path(json.loads(facts.read_text())).name)

    assert seen == ["first.duckdb", "first.duckdb", "second.duckdb"]
