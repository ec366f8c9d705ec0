"""The runs grid: a page of the project's runs, newest first, each with its tasks' statuses.

The page is read in one read transaction with a fixed number of statements (the runs, their
task runs, the columns), whatever the number of runs, so the web UI can refresh it every few
seconds. Runs are grouped by pipeline, each group with its own columns: its active tasks, then
any task a run of the page ran that is no longer active.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from typing import ClassVar, TypeVar

from etl_craft.core.enums import RunStatus, TaskRunStatus, TriggerKind
from etl_craft.core.errors import UsageError
from etl_craft.enginedb.grid import (
    GridQuery,
    GridRunRow,
    GridTaskRow,
    GridTaskRunRow,
    RunFacts,
    read_grid_runs,
    read_grid_task_runs,
    read_grid_tasks,
)
from etl_craft.operations.context import OperationContext

MAX_PAGE = 100
DEFAULT_PAGE = 25
E = TypeVar("E", RunStatus, TriggerKind)


@dataclass(frozen=True)
class GridFilter:
    status: RunStatus | None = None
    trigger_kind: TriggerKind | None = None
    since: date | None = None
    until: date | None = None
    pipeline_code: str | None = None
    limit: int = DEFAULT_PAGE
    before: int | None = None  # the page of runs older than this run id


@dataclass(frozen=True)
class GridCell:
    task_code: str
    status: TaskRunStatus | None  # None: the task has not run in this run
    attempts: int
    attempt_id: int | None
    rows_written: int | None
    seconds: float | None = None  # how long its latest attempt ran; None until it ended


@dataclass(frozen=True)
class GridRun(RunFacts):
    pipeline_code: str
    cells: tuple[GridCell, ...]  # one per column of its pipeline, in column order


@dataclass(frozen=True)
class GridPipeline:
    pipeline_code: str
    task_codes: tuple[str, ...]
    runs: tuple[GridRun, ...]


@dataclass(frozen=True)
class RunsGrid:
    schema: ClassVar[str] = "etl-craft/runs-grid/1"
    filter: GridFilter
    pipelines: tuple[GridPipeline, ...]
    run_count: int
    next_before: int | None  # the run id to ask the next (older) page with; None: last page


def parse_filter(
    *,
    status: str | None = None,
    kind: str | None = None,
    since: str | None = None,
    until: str | None = None,
    pipeline_code: str | None = None,
    limit: int = DEFAULT_PAGE,
    before: int | None = None,
) -> GridFilter:
    """A grid filter from text fields (a form's, a query string's); empty means no filter."""
    return GridFilter(
        status=_choice(RunStatus, "status", status),
        trigger_kind=_choice(TriggerKind, "kind", kind),
        since=parse_day("since", since),
        until=parse_day("until", until),
        pipeline_code=pipeline_code or None,
        limit=limit,
        before=before,
    )


def runs_grid(ctx: OperationContext, wanted: GridFilter) -> RunsGrid:
    _check(wanted)
    query = GridQuery(
        project_code=ctx.project_code,
        limit=wanted.limit + 1,  # one more than shown says whether an older page exists
        before=wanted.before,
        since=wanted.since or date.min,
        until=wanted.until or date.max,
        pipeline_code=wanted.pipeline_code,
        status=wanted.status.value if wanted.status else None,
        trigger_kind=wanted.trigger_kind.value if wanted.trigger_kind else None,
    )
    with ctx.engine.read() as conn:
        found = read_grid_runs(conn, query)
        runs = found[: wanted.limit]
        task_runs = read_grid_task_runs(conn, [run.run_id for run in runs])
        tasks = read_grid_tasks(conn, sorted({run.pipeline_id for run in runs}))
    more = len(found) > wanted.limit
    return RunsGrid(
        filter=wanted,
        pipelines=_group(runs, task_runs, tasks),
        run_count=len(runs),
        next_before=runs[-1].run_id if more else None,
    )


def _group(
    runs: list[GridRunRow], task_runs: list[GridTaskRunRow], tasks: list[GridTaskRow]
) -> tuple[GridPipeline, ...]:
    by_run: dict[int, dict[str, GridTaskRunRow]] = defaultdict(dict)
    for row in task_runs:
        by_run[row.run_id][row.task_code] = row
    columns: dict[int, list[str]] = defaultdict(list)
    for task in tasks:
        columns[task.pipeline_id].append(task.task_code)
    grouped: dict[int, list[GridRunRow]] = {}
    for run in runs:
        grouped.setdefault(run.pipeline_id, []).append(run)
        known = columns[run.pipeline_id]
        known.extend(code for code in by_run[run.run_id] if code not in known)
    return tuple(
        GridPipeline(
            members[0].pipeline_code,
            tuple(columns[pipeline_id]),
            tuple(_row(run, by_run[run.run_id], columns[pipeline_id]) for run in members),
        )
        for pipeline_id, members in grouped.items()
    )


def _row(run: GridRunRow, ran: dict[str, GridTaskRunRow], task_codes: list[str]) -> GridRun:
    """The run with one cell per column; a task it has not run is an empty cell."""
    return GridRun(
        run_id=run.run_id,
        pipeline_code=run.pipeline_code,
        run_key=run.run_key,
        trigger_kind=run.trigger_kind,
        run_date=run.run_date,
        status=run.status,
        started_at=run.started_at,
        ended_at=run.ended_at,
        started_by=run.started_by,
        cells=tuple(_cell(code, ran.get(code)) for code in task_codes),
    )


def _cell(task_code: str, row: GridTaskRunRow | None) -> GridCell:
    if row is None:
        return GridCell(task_code, None, 0, None, None)
    started, ended = row.attempt_started_at, row.attempt_ended_at
    seconds = None if started is None or ended is None else (ended - started).total_seconds()
    return GridCell(task_code, row.status, row.attempts, row.attempt_id, row.rows_written, seconds)


def _check(wanted: GridFilter) -> None:
    if not 1 <= wanted.limit <= MAX_PAGE:
        raise UsageError(
            f"a page of runs holds 1 to {MAX_PAGE} runs, not {wanted.limit}; ask for fewer"
        )
    if wanted.since and wanted.until and wanted.since > wanted.until:
        raise UsageError(
            f"the run dates from {wanted.since} to {wanted.until} are empty: the first is after "
            "the last; swap them"
        )


def _choice(kind: type[E], field: str, text: str | None) -> E | None:
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        allowed = ", ".join(member.value for member in kind)
        raise UsageError(
            f"{field} {text!r} is not a known value; expected one of {allowed}, or none for all"
        ) from None


def parse_day(field: str, text: str | None) -> date | None:
    """The date a form's field holds; None when it is empty."""
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"{field} {text!r} is not a date; expected YYYY-MM-DD, for example 2026-01-31"
        ) from None
