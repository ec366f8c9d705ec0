"""Backfills as the web UI follows them: each pipeline's BACKFILL runs, and stopping them.

A queued backfill (queue_backfill) is one BACKFILL run per date, all queued while the pipeline
has no other live run; so a pipeline's live BACKFILL runs are the rest of its current backfill,
and stopping it cancels them, each with the reason, through the same cancel as a run's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import ClassVar

from etl_craft.core.enums import RunStatus, TriggerKind
from etl_craft.core.errors import RunStateError
from etl_craft.enginedb.grid import GridQuery, GridRunRow, read_grid_runs
from etl_craft.enginedb.run_lists import live_runs
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import Intervention, cancel, require_reason
from etl_craft.operations.runs.views import pipeline_id_of

RECENT_BACKFILL_RUNS = 400  # more than one backfill's most dates (366)
LIVE = (RunStatus.QUEUED, RunStatus.IN_PROGRESS)


@dataclass(frozen=True)
class BackfillRun:
    run_id: int
    run_date: date
    status: RunStatus


@dataclass(frozen=True)
class PipelineBackfills:
    pipeline_code: str
    first: date
    last: date
    counts: tuple[tuple[str, int], ...]  # status -> runs, in RunStatus order
    live: int  # runs still QUEUED or IN-PROGRESS: what stopping would cancel
    runs: tuple[BackfillRun, ...]  # by run date

    @property
    def finished(self) -> int:
        return sum(n for status, n in self.counts if status in ("SUCCESS", "SKIPPED"))


@dataclass(frozen=True)
class BackfillProgress:
    schema: ClassVar[str] = "etl-craft/backfill-progress/1"
    pipelines: tuple[PipelineBackfills, ...]  # live ones first, then by pipeline code


@dataclass(frozen=True)
class BackfillStop:
    schema: ClassVar[str] = "etl-craft/backfill-stop/1"
    pipeline_code: str
    cancelled: tuple[Intervention, ...]
    message: str


def backfill_progress(ctx: OperationContext, pipeline_code: str | None = None) -> BackfillProgress:
    """The newest BACKFILL runs of the project (or of one pipeline), grouped by pipeline."""
    query = GridQuery(
        project_code=ctx.project_code,
        limit=RECENT_BACKFILL_RUNS,
        before=None,
        since=date.min,
        until=date.max,
        pipeline_code=pipeline_code,
        status=None,
        trigger_kind=TriggerKind.BACKFILL.value,
    )
    with ctx.engine.read() as conn:
        rows = read_grid_runs(conn, query)
    grouped: dict[str, list[GridRunRow]] = {}
    for row in rows:
        grouped.setdefault(row.pipeline_code, []).append(row)
    found = [_pipeline(code, runs) for code, runs in grouped.items()]
    found.sort(key=lambda item: (item.live == 0, item.pipeline_code))
    return BackfillProgress(tuple(found))


def stop_backfill(ctx: OperationContext, pipeline_code: str, reason: str | None) -> BackfillStop:
    """Cancel every live BACKFILL run of the pipeline, oldest first, each with the reason."""
    why = require_reason(reason, "stop backfill")
    with ctx.engine.read() as conn:
        pipeline_id = pipeline_id_of(conn, ctx.project_code, pipeline_code, inactive=True)
        live = live_runs(conn, pipeline_id)
    run_ids = [row.pipeline_run_id for row in live if row.trigger_kind == TriggerKind.BACKFILL]
    if not run_ids:
        raise RunStateError(
            f"pipeline {pipeline_code} has no live BACKFILL run, so there is no backfill to "
            "stop; the backfills page lists its backfill runs and how they ended"
        )
    done = tuple(cancel(ctx, pipeline_code, run_id, why) for run_id in run_ids)
    message = (
        f"stopped the backfill of {pipeline_code}: cancel requested for "
        f"{len(done)} run(s) ({', '.join(str(run_id) for run_id in run_ids)})"
    )
    return BackfillStop(pipeline_code, done, message)


def _pipeline(code: str, rows: list[GridRunRow]) -> PipelineBackfills:
    runs = sorted((BackfillRun(r.run_id, r.run_date, r.status) for r in rows), key=_by_date)
    tally = Counter(run.status for run in runs)
    counts = tuple((status.value, tally[status]) for status in RunStatus if tally[status])
    live = sum(tally[status] for status in LIVE)
    return PipelineBackfills(code, runs[0].run_date, runs[-1].run_date, counts, live, tuple(runs))


def _by_date(run: BackfillRun) -> tuple[date, int]:
    return run.run_date, run.run_id
