"""A run's timeline: one row per task, its attempts as bars from start to end, and the time
each waited in its queue drawn apart, before the bar.

The drawing is SVG attributes only (no style attribute), which the UI's CSP allows; its
colours come from the sheet by class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from etl_craft.operations.runs.detail import AttemptSummary, RunDetail

WIDTH = 1000.0  # the time axis, in drawing units; the SVG scales to its box
LABEL = 180.0  # the task names' column
ROW = 22.0


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    css: str  # "queued", or the attempt's status in lower case
    title: str


@dataclass(frozen=True)
class Lane:
    task_code: str
    y: float
    bars: tuple[Bar, ...]


@dataclass(frozen=True)
class Timeline:
    lanes: tuple[Lane, ...]
    seconds: float  # from the first queued attempt to the last end (or now)
    height: float
    label_width: float = LABEL
    width: float = LABEL + WIDTH


def timeline(detail: RunDetail, now: datetime) -> Timeline | None:
    """The run's timeline; None before any attempt was queued."""
    attempts = [a for task in detail.tasks for a in task.attempts]
    queued = [a.queued_at for a in attempts if a.queued_at is not None]
    if not queued:
        return None
    first = min(queued)
    span = max((max(a.ended_at or now for a in attempts) - first).total_seconds(), 1.0)

    def x(instant: datetime) -> float:
        return LABEL + WIDTH * (instant - first).total_seconds() / span

    ran = [task for task in detail.tasks if task.attempts]
    lanes = tuple(
        Lane(task.task_code, ROW * (index + 1), tuple(_bars(task.attempts, x, now)))
        for index, task in enumerate(ran)
    )
    return Timeline(lanes, span, ROW * (len(lanes) + 2))


def _bars(
    attempts: tuple[AttemptSummary, ...], x: Callable[[datetime], float], now: datetime
) -> list[Bar]:
    bars = []
    for a in attempts:
        start, end = a.started_at or now, a.ended_at or now
        if a.queued_at is not None and start > a.queued_at:
            waited = (
                f"attempt {a.attempt_number} queued {(start - a.queued_at).total_seconds():.0f} s"
            )
            bars.append(Bar(x(a.queued_at), x(start) - x(a.queued_at), "queued", waited))
        if a.started_at is not None:
            css = a.status.value.lower().replace("_", "-")
            ran = (end - start).total_seconds()
            said = f"attempt {a.attempt_number} {a.status.value}, ran {ran:.0f} s"
            bars.append(Bar(x(start), max(x(end) - x(start), 2.0), css, said))
    return bars
