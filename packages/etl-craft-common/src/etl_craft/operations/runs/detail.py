"""A run with every attempt of each of its tasks: what the run page shows."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from etl_craft.core.errors import NotFoundError
from etl_craft.enginedb.grid import AttemptFacts, AttemptRow, read_run_attempts
from etl_craft.operations.context import OperationContext
from etl_craft.operations.runs.views import RunView, read_run_view


@dataclass(frozen=True)
class AttemptSummary(AttemptFacts):
    @property
    def seconds(self) -> float | None:
        """How long it ran; None until it has both started and ended."""
        if self.started_at is None or self.ended_at is None:
            return None
        return (self.ended_at - self.started_at).total_seconds()


@dataclass(frozen=True)
class TaskAttempts:
    task_code: str
    attempts: tuple[AttemptSummary, ...]  # oldest first


@dataclass(frozen=True)
class RunDetail:
    schema: ClassVar[str] = "etl-craft/run-detail/1"
    run: RunView
    tasks: tuple[TaskAttempts, ...]  # the run view's tasks in order, then any no longer active

    def attempts_of(self, task_code: str) -> tuple[AttemptSummary, ...]:
        for task in self.tasks:
            if task.task_code == task_code:
                return task.attempts
        return ()

    def seconds_of(self, task_code: str) -> float | None:
        """How long the task's attempts ran, together; None when none has ended. A task
        marked by hand has no attempt time: the mark does not make it longer."""
        ran = [a.seconds for a in self.attempts_of(task_code) if a.seconds is not None]
        return sum(ran) if ran else None


def run_detail(ctx: OperationContext, run_id: int) -> RunDetail:
    """The run of this project with id ``run_id``, and every attempt of each task."""
    with ctx.engine.read() as conn:
        view = read_run_view(conn, run_id)
        rows = read_run_attempts(conn, run_id)
    if view.project_code != ctx.project_code:
        raise NotFoundError(
            f"project {ctx.project_code} has no run {run_id}; list its runs on the runs page "
            "or with etl-craft history --pipeline P"
        )
    by_task: dict[str, list[AttemptSummary]] = {task.task_code: [] for task in view.tasks}
    for row in rows:
        by_task.setdefault(row.task_code, []).append(_summary(row))
    return RunDetail(view, tuple(TaskAttempts(code, tuple(a)) for code, a in by_task.items()))


def _summary(row: AttemptRow) -> AttemptSummary:
    return AttemptSummary(**{f.name: getattr(row, f.name) for f in fields(AttemptFacts)})
