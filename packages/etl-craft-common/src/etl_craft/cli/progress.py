"""Live progress of `etl-craft run`, `run --backfill` and long builds, drawn with rich.

Only text output to a terminal gets it: under --format json, or when stdout is a file or a
pipe, nothing is drawn and the output is what it would be without it. The display is
transient: once a run ends it gives way to one summary line, and the command's usual report
follows.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from etl_craft.core.enums import TaskRunStatus
from etl_craft.operations.context import OperationContext
from etl_craft.operations.runs.requests import Watch
from etl_craft.operations.runs.views import RunView, read_run_view
from etl_craft.operations.runs.watching import RunWatcher

REFRESHES_PER_SECOND = 4


def live_progress(ctx: OperationContext, fmt: str, stream: TextIO | None = None) -> Watch | None:
    """A progress display for each run the command supervises, or None (nothing is drawn)
    unless the output is text on a terminal."""
    out = sys.stdout if stream is None else stream
    if fmt != "text" or not out.isatty():
        return None
    console = Console(file=out)

    def watch(run_id: int) -> AbstractContextManager[object]:
        return _watching(ctx, console, run_id)

    return watch


@contextmanager
def _watching(ctx: OperationContext, console: Console, run_id: int) -> Iterator[None]:
    started = time.monotonic()

    def show(view: RunView) -> None:
        live.update(render_progress(view, time.monotonic() - started))

    waiting = Text(f"run {run_id}: starting")
    with (
        Live(
            waiting, console=console, transient=True, refresh_per_second=REFRESHES_PER_SECOND
        ) as live,
        RunWatcher(ctx, show, run_id=run_id),
    ):
        yield
    with ctx.engine.read() as conn:
        ended = read_run_view(conn, run_id)
    console.print(summary(ended, time.monotonic() - started), highlight=False)


def counts(view: RunView) -> tuple[int, int, int]:
    """(done, running, waiting) tasks: settled, in progress, not started in this run yet."""
    done = sum(1 for task in view.tasks if task.status is not None and task.status.terminal)
    running = sum(1 for task in view.tasks if task.status is TaskRunStatus.IN_PROGRESS)
    return done, running, len(view.tasks) - done - running


def render_progress(view: RunView, elapsed: float) -> Group:
    done, running, waiting = counts(view)
    lines = [
        Text.assemble(
            (f"{view.pipeline_code} run {view.run_id}", "bold"),
            f" {view.status.value}: {done} done, {running} running, {waiting} waiting, "
            f"{_clock(elapsed)} elapsed",
        )
    ]
    for task in view.tasks:
        if task.status is TaskRunStatus.IN_PROGRESS:
            attempt = f"attempt {task.attempts}" if task.attempts else "queued"
            lines.append(Text(f"  running {task.task_code} ({attempt})"))
    return Group(*lines)


def summary(view: RunView, elapsed: float) -> str:
    tally = ", ".join(f"{count} {status}" for status, count in sorted(view.counts().items()))
    return (
        f"{view.pipeline_code} run {view.run_id} ({view.run_date}) {view.status.value} after "
        f"{_clock(elapsed)}: {tally}"
    )


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}" if whole >= 60 else f"{seconds:.1f}s"


@contextmanager
def step_progress(
    fmt: str, total: int, description: str, stream: TextIO | None = None
) -> Iterator[Callable[[str], None]]:
    """A bar of ``total`` steps for a long command (the catalog build's pages); yields the
    function that counts one step. Drawn, like run progress, only for text on a terminal."""
    out = sys.stdout if stream is None else stream
    if fmt != "text" or not out.isatty():
        yield lambda _: None
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(file=out), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda _: bar.advance(task)
