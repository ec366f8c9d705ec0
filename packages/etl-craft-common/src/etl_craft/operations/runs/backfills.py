"""`run --backfill FROM:TO`: one BACKFILL run per date, each supervised to its end in turn.

Before each date the pipeline's live runs are checked again, under the pipeline's run lock: a
live scheduled or manual run (or a backfill run of another date) refuses the date. A live backfill
run of the same date is resumed, so the resume command continues where a stopped backfill left
off. Each date is one AUD_ACTIONS row (`run`, REQUESTED or REFUSED) and one BACKFILL
intervention on its run, with the actor and the reason. How a backfill run judges dependencies on
other pipelines is the gatekeeper's rule (S2.A.5), read from the run's TRIGGER_KIND.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import ClassVar

from etl_craft.core.enums import RunStatus, TriggerKind
from etl_craft.core.errors import RunStateError, UsageError
from etl_craft.enginedb.run_lists import live_runs, lock_pipeline_runs
from etl_craft.enginedb.transitions import create_run
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import Acting, perform, require_reason, view_of
from etl_craft.operations.runs.foreground import RunRequest, find_or_create_run, run_pipeline
from etl_craft.operations.runs.requests import Watch
from etl_craft.operations.runs.views import RunView
from etl_craft.runtime.stopping import active

MAX_DATES = 366
_RANGE = re.compile(r"(\d{4}-\d{2}-\d{2}):(\d{4}-\d{2}-\d{2})")
FINISHED = (RunStatus.SUCCESS, RunStatus.SKIPPED)


@dataclass(frozen=True)
class BackfillRequest:
    pipeline_code: str
    dates: str  # FROM:TO, both YYYY-MM-DD
    reason: str | None


@dataclass(frozen=True)
class Backfill:
    schema: ClassVar[str] = "etl-craft/backfill/1"
    pipeline_code: str
    first: date
    last: date
    runs: tuple[RunView, ...]  # one per date reached, in date order
    finished: int  # dates whose run ended SUCCESS or SKIPPED
    complete: bool
    message: str
    resume_command: str | None


def backfill_dates(text: str) -> tuple[date, ...]:
    """The dates of FROM:TO, both included; refused unless strictly well formed."""
    shape = _RANGE.fullmatch(text.strip())
    if shape is None:
        raise UsageError(
            f"--backfill {text!r} is not a date range; expected FROM:TO as YYYY-MM-DD:YYYY-MM-DD, "
            "for example --backfill 2026-01-01:2026-01-31"
        )
    try:
        first, last = (date.fromisoformat(part) for part in shape.groups())
    except ValueError as error:
        raise UsageError(
            f"--backfill {text!r} names a date that does not exist ({error}); give real dates"
        ) from None
    if first > last:
        raise UsageError(
            f"--backfill {text!r} starts after it ends; expected FROM <= TO, as in "
            f"--backfill {last}:{first}"
        )
    count = (last - first).days + 1
    if count > MAX_DATES:
        raise UsageError(
            f"--backfill {text!r} covers {count} dates; at most {MAX_DATES} are allowed in one "
            "backfill: split the range into several backfills"
        )
    return tuple(first + timedelta(days=offset) for offset in range(count))


def backfill(
    ctx: OperationContext, request: BackfillRequest, watch: Watch | None = None
) -> Backfill:
    """Run the pipeline once per date, in order; stop at the first refused or failed date.
    ``watch`` is in force while each date's run is supervised."""
    reason = require_reason(request.reason, "run --backfill")
    dates = backfill_dates(request.dates)
    views: list[RunView] = []
    stop = active()
    for day in dates:
        if stop is not None:
            stop.raise_if_stopped()  # a signal that came as the last date's run ended
        try:
            run_id = _open_date(ctx, request, day, reason)
            with watch(run_id) if watch is not None else contextlib.nullcontext():
                view = run_pipeline(ctx, RunRequest(request.pipeline_code, run_id=run_id))
        except RunStateError as refusal:
            return _stopped(request, dates, views, day, reason, f"date {day} refused: {refusal}")
        views.append(view)
        if view.status not in FINISHED:
            why = f"run {view.run_id} of date {day} ended {view.status}"
            if view.status is RunStatus.IN_PROGRESS:
                why = f"run {view.run_id} of date {day} stopped {view.status} (paused?)"
            return _stopped(request, dates, views, day, reason, why)
    message = (
        f"backfilled {request.pipeline_code} for {len(dates)} date(s), {dates[0]} to {dates[-1]}"
    )
    return Backfill(
        request.pipeline_code, dates[0], dates[-1], tuple(views), len(views), True, message, None
    )


def queue_backfill(ctx: OperationContext, request: BackfillRequest) -> Backfill:
    """Queue one BACKFILL run per date for etl-craft server, which runs them in date order.

    All dates are queued in one transaction, and only while the pipeline has no live run: the
    server admits a pipeline's QUEUED runs one at a time, oldest first.
    """
    reason = require_reason(request.reason, "backfill")
    dates = backfill_dates(request.dates)

    def body(acting: Acting) -> list[int]:
        pipeline_id = acting.pipeline(request.pipeline_code)
        lock_pipeline_runs(acting.conn, pipeline_id)
        live = live_runs(acting.conn, pipeline_id)
        if live:
            listed = ", ".join(f"run {row.pipeline_run_id} ({row.status})" for row in live)
            raise RunStateError(
                f"pipeline {request.pipeline_code} has {listed} live; a backfill is queued only "
                "when none is: let them end, or cancel them, then ask again"
            )
        return [_queue_date(acting, pipeline_id, day, reason) for day in dates]

    arguments: dict[str, object] = {
        "pipeline_code": request.pipeline_code,
        "backfill": request.dates,
        "queued": True,
        "reason": reason,
    }
    run_ids, _ = perform(ctx, "run", arguments, body)
    views = tuple(view_of(ctx, run_id) for run_id in run_ids)
    message = (
        f"queued {len(dates)} backfill run(s) of {request.pipeline_code}, {dates[0]} to "
        f"{dates[-1]}; etl-craft server runs them one at a time in date order"
    )
    return Backfill(request.pipeline_code, dates[0], dates[-1], views, 0, False, message, None)


def _queue_date(acting: Acting, pipeline_id: int, day: date, reason: str) -> int:
    connector = acting.ctx.connector
    run_id = create_run(
        acting.conn,
        pipeline_id=pipeline_id,
        run_key=f"backfill:{day.isoformat()}:{uuid.uuid4()}",
        trigger_kind=TriggerKind.BACKFILL,
        run_date=day,
        actor=acting.ctx.actor,
        config_sha256=connector.fingerprint() if connector else None,
    )
    acting.intervene(run_id, "BACKFILL", reason, to_status=RunStatus.QUEUED.value)
    return run_id


def _open_date(ctx: OperationContext, request: BackfillRequest, day: date, reason: str) -> int:
    """Find or create the date's BACKFILL run and record why, in one transaction."""

    def body(acting: Acting) -> int:
        run = find_or_create_run(
            acting.conn,
            ctx,
            RunRequest(request.pipeline_code, run_date=day, trigger_kind=TriggerKind.BACKFILL),
        )
        acting.scope = replace(
            acting.scope, pipeline_id=run.pipeline_id, run_id=run.pipeline_run_id
        )
        acting.intervene(run.pipeline_run_id, "BACKFILL", reason, to_status=run.status.value)
        return run.pipeline_run_id

    arguments: dict[str, object] = {
        "pipeline_code": request.pipeline_code,
        "backfill": request.dates,
        "date": day.isoformat(),
        "reason": reason,
    }
    run_id, _ = perform(ctx, "run", arguments, body)
    return run_id


def _stopped(
    request: BackfillRequest,
    dates: tuple[date, ...],
    views: list[RunView],
    day: date,
    reason: str,
    why: str,
) -> Backfill:
    finished = sum(1 for view in views if view.status in FINISHED)
    resume = (
        f"etl-craft backfill --pipeline {request.pipeline_code} --from {day} --to {dates[-1]} "
        f"--reason {_quoted(reason)}"
    )
    message = (
        f"backfill of {request.pipeline_code} stopped at {day}: {why}. {finished} of "
        f"{len(dates)} date(s) finished. Once the cause is dealt with, resume with: {resume}"
    )
    return Backfill(
        request.pipeline_code, dates[0], dates[-1], tuple(views), finished, False, message, resume
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
