"""Live progress of `etl-craft run` on a real pseudo-terminal; unchanged output anywhere else."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import select
import struct
import subprocess
import termios
from pathlib import Path

from etl_craft.cli.actions.status import render_run
from etl_craft.operations.runs.views import read_run_view
from tests.fixtures.processes import ETL_CRAFT, process_env, sqlite_project
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

__all__ = ["sqlite_project"]

HOLD = """
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    release = Path(context.input_params["release"])
    while not release.exists():
        time.sleep(0.05)
    return ScriptResult(row_count=2)
"""
QUICK = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    return ScriptResult(row_count=1)
"""
CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
RUN = ("run", "--pipeline_code", "held", "--run-key", "manual:progress")


def held_pipeline(project: ProjectOnDisk, release: Path) -> None:
    """first (runs until ``release`` exists), then second."""
    scripts = project.root / "ingestion_scripts"
    (scripts / "hold.py").write_text(HOLD)
    (scripts / "quick.py").write_text(QUICK)
    project.migrate(
        "0001_held.sql",
        f"""
        INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
        SELECT PROJECT_ID, 'held' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'first', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'held';
        INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
        SELECT PIPELINE_ID, 'second', 'PYTHON' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'held';
        INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID)
        SELECT d.TASK_ID, u.TASK_ID FROM CFG_TASKS d, CFG_TASKS u
         WHERE d.TASK_CODE = 'second' AND u.TASK_CODE = 'first';
        INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
        SELECT k.TASK_ID, x.N, x.V FROM CFG_TASKS k JOIN (
          SELECT 'first' AS T, 'SCRIPT' AS N, 'hold.py' AS V
          UNION ALL SELECT 'first', 'INPUT_PARAMS', '{{"release": "{release}"}}'
          UNION ALL SELECT 'second', 'SCRIPT', 'quick.py'
        ) x ON x.T = k.TASK_CODE;
        """,
    )


class Terminal:
    """The real CLI with its stdout on a pseudo-terminal of 120 columns; stderr apart."""

    def __init__(self, project: ProjectOnDisk, *args: str) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.process = subprocess.Popen(
            [ETL_CRAFT, *args],
            cwd=project.root,
            env={**process_env(), "TERM": "xterm-256color", "COLUMNS": "120"},
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=subprocess.PIPE,
        )
        os.close(slave)
        self.shown = b""

    def read(self, timeout: float = 0.1) -> None:
        if select.select([self.master], [], [], timeout)[0]:
            with contextlib.suppress(OSError):  # EIO: the process closed the terminal
                self.shown += os.read(self.master, 65536)

    def finish(self, timeout: float = 120) -> int:
        def ended() -> bool:
            self.read()  # drained while it runs, so a full terminal never blocks it
            return self.process.poll() is not None

        wait_for(ended, f"{self.process.args!r} to exit", timeout, every=0)
        self.read(0)
        code = self.process.wait()
        os.close(self.master)
        return code

    @property
    def text(self) -> str:
        return self.shown.decode(errors="replace").replace("\r\n", "\n")

    @property
    def plain(self) -> str:
        """What a person reads: the text without the terminal's control sequences."""
        return CONTROL.sub("", self.text)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()


def report(project: ProjectOnDisk) -> str:
    """What a plain `etl-craft run` printed before progress existed: the run's report."""
    with project.engine.read() as conn:
        run_id = conn.one("run_by_key", pipeline_id=project.pipeline_id("held"), run_key=RUN[-1])
        assert run_id is not None
        return render_run(read_run_view(conn, int(run_id["pipeline_run_id"]))) + "\n"


def test_a_run_on_a_terminal_shows_live_progress_then_a_summary(
    sqlite_project: ProjectOnDisk, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    held_pipeline(sqlite_project, release)
    terminal = Terminal(sqlite_project, *RUN)
    try:

        def shows_first_running() -> bool:
            terminal.read()
            return "running first (attempt 1)" in terminal.plain

        wait_for(shows_first_running, "the progress display to show first running", 120)
        assert "held run 1 IN-PROGRESS: 0 done, 1 running, 1 waiting, " in terminal.plain
        assert " elapsed" in terminal.plain
        release.touch()
        code = terminal.finish()
    finally:
        terminal.stop()

    assert code == 0, terminal.plain
    assert "\x1b[2K" in terminal.text  # redrawn in place: the line is erased and drawn again
    summary = [line for line in terminal.plain.splitlines() if line.startswith("held run 1 (")]
    assert len(summary) == 1
    assert " SUCCESS after " in summary[0]
    assert summary[0].endswith(": 2 SUCCESS")
    assert terminal.plain.endswith(report(sqlite_project))


def test_a_run_into_a_pipe_prints_exactly_its_report(
    sqlite_project: ProjectOnDisk, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    release.touch()
    held_pipeline(sqlite_project, release)

    done = subprocess.run(
        [ETL_CRAFT, *RUN],
        cwd=sqlite_project.root,
        env={**process_env(), "TERM": "xterm-256color"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout == report(sqlite_project).encode()


def test_json_on_a_terminal_is_only_the_document(
    sqlite_project: ProjectOnDisk, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    release.touch()
    held_pipeline(sqlite_project, release)
    terminal = Terminal(sqlite_project, "--format", "json", *RUN)
    try:
        code = terminal.finish()
    finally:
        terminal.stop()

    assert code == 0
    assert "\x1b" not in terminal.text
    document = json.loads(terminal.text)
    assert (document["schema"], document["status"]) == ("etl-craft/run/1", "SUCCESS")
