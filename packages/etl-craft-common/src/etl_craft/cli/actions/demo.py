"""etl-craft demo: run the Support Insights demo in a working folder, with progress on stderr."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import TextIO

from etl_craft.cli.output import emit
from etl_craft.core.errors import ExitCode
from etl_craft.operations.demo.project import (
    DemoObserver,
    DemoReport,
    DemoRequest,
    run_demo,
)
from etl_craft.operations.runs.views import RunView

PROGRAM = "etl-craft"
UV_RUN_VARIABLE = "UV_RUN_RECURSION_DEPTH"  # set by uv run for the command it starts


def handle(args: argparse.Namespace) -> int:
    display = Progress(sys.stderr)
    program = shell_program(args.folder)
    request = DemoRequest(args.folder, args.profile, args.source, program=program)
    report = run_demo(request, display)
    emit(report, args.format, render(report))
    return 0 if report.succeeded else int(ExitCode.FAILURE)


def shell_program(folder: Path) -> str:
    """How the user's shell calls this etl-craft from ``folder``: its name when PATH finds it;
    under `uv run`, whose environment is not on the shell's PATH, `uv run etl-craft` inside the
    project and the full path outside it."""
    running = Path(sys.argv[0])
    if running.name != PROGRAM:
        return PROGRAM  # started some other way (python -m): the installed name is the best guess
    through_uv = UV_RUN_VARIABLE in os.environ
    found = shutil.which(PROGRAM)
    if not through_uv and found is not None and Path(found).resolve() == running.resolve():
        return PROGRAM
    environment = os.environ.get("VIRTUAL_ENV")
    if through_uv and environment and folder.resolve().is_relative_to(Path(environment).parent):
        return f"uv run {PROGRAM}"
    return shlex.quote(str(running.resolve()))


class Progress(DemoObserver):
    """One line per step and per pipeline; on a terminal the running pipeline's line updates."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.shown = ""

    def step(self, text: str) -> None:
        self.stream.write(f"{text}\n")

    def progress(self, view: RunView, elapsed: float) -> None:
        line = _line(view, elapsed)
        if line == self.shown:
            return
        self.shown = line
        if self.live:
            self.stream.write(f"\r\x1b[K{line}")
            self.stream.flush()

    def finished(self, view: RunView, elapsed: float) -> None:
        self.shown = ""
        self.stream.write(("\r\x1b[K" if self.live else "") + _line(view, elapsed) + "\n")
        for task in view.tasks:
            status = task.status.value if task.status else "NOT RUN"
            rows = "" if task.rows_written is None else f", {task.rows_written} row(s)"
            retried = f", {task.attempts} attempts" if task.attempts > 1 else ""
            self.stream.write(f"    {task.task_code:<24} {status}{rows}{retried}\n")
        self.stream.flush()


def _line(view: RunView, elapsed: float) -> str:
    settled = sum(1 for task in view.tasks if task.status is not None and task.status.terminal)
    running = [t.task_code for t in view.tasks if t.status is not None and not t.status.terminal]
    now = f": running {', '.join(running)}" if running else ""
    return (
        f"{view.pipeline_code} run {view.run_id} {view.status.value}: "
        f"{settled}/{len(view.tasks)} tasks done, {elapsed:.1f}s{now}"
    )


def render(report: DemoReport) -> str:
    lines = [
        f"Support Insights demo: batch {report.batch.batch} in {report.folder} "
        f"({report.seconds:.1f}s, Engine DB {report.engine_db})",
        "",
        f"{'pipeline':<18} {'run':>5}  {'status':<11} {'tasks':>7}  {'attempts':>8}  time",
    ]
    for run in report.runs:
        done = sum(1 for task in run.tasks if task.status is not None)
        attempts = sum(task.attempts for task in run.tasks)
        took = "-"
        if run.started_at and run.ended_at:
            took = f"{(run.ended_at - run.started_at).total_seconds():.1f}s"
        lines.append(
            f"{run.pipeline_code:<18} {run.run_id:>5}  {run.status.value:<11} "
            f"{done:>3}/{len(run.tasks):<3}  {attempts:>8}  {took}"
        )
    lines += ["", f"{'layer':<7} {'table':<42} {'rows':>6} {'current':>8}"]
    for count in report.layers:
        rows = "-" if count.rows is None else str(count.rows)
        current = "" if count.current is None else str(count.current)
        lines.append(f"{count.layer:<7} {count.table:<42} {rows:>6} {current:>8}")
    lines += ["", "Next, try:", *(f"  {step}" for step in report.next_steps)]
    return "\n".join(lines)
