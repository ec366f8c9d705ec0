"""Schedule ticks become runs: each due tick of a scheduled pipeline is one run, created once.

A tick's run is keyed ``schedule:<tick in UTC>``, so the unique (PIPELINE_ID, RUN_KEY) makes its
creation idempotent across restarts, and the pipeline's runs lock makes two callers take turns.
Ticks missed beyond the catch-up allowance are recorded as SKIPPED runs, so history shows them,
except, without catch-up, the ticks before an overseer first started on the Engine DB: nobody
was there to miss them, and a schedule that starts in the past would otherwise open with a page
of SKIPPED runs.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from etl_craft.core.actor import Actor, ActorKind
from etl_craft.core.cron import CronExpression, next_after, ticks_between
from etl_craft.core.enums import RunStatus, TriggerKind
from etl_craft.core.errors import RunStateError
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.run_lists import LiveRun, live_runs, lock_pipeline_runs
from etl_craft.enginedb.schedules import (
    ScheduledPipeline,
    first_overseer_start,
    latest_schedule_run_key,
    read_scheduled_pipelines,
)
from etl_craft.enginedb.transitions import create_run, skip_run

log = logging.getLogger(__name__)

SCHEDULE_ACTOR = Actor("schedule", ActorKind.SCHEDULE)
RUN_KEY_PREFIX = "schedule:"
MISSED = "missed while no overseer was running"
# A minutely schedule missed for a week would otherwise write ten thousand SKIPPED rows.
MAX_SKIPPED_PER_CALL = 100
_KEY_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
# Ticks are whole minutes, so this makes the start date's own midnight a possible tick.
_JUST_BEFORE = timedelta(microseconds=1)
# The overseer calls every second: one warning per problem finds it, one per pass buries the log.
_warned: dict[tuple[str, int], str] = {}


@dataclass(frozen=True)
class TickOutcome:
    pipeline_code: str
    run_id: int
    run_key: str
    tick: datetime
    outcome: RunStatus  # QUEUED or SKIPPED
    message: str | None


@dataclass(frozen=True)
class _Schedule:
    cron: CronExpression
    zone: ZoneInfo
    start: datetime | None  # the start date's midnight in the zone


@dataclass(frozen=True)
class _Due:
    runs: tuple[datetime, ...]  # the newest due ticks, oldest first: they run
    missed: tuple[datetime, ...]  # older due ticks recorded SKIPPED, oldest first
    unrecorded: int  # still older due ticks beyond MAX_SKIPPED_PER_CALL
    unrecorded_span: tuple[datetime, datetime] | None


class _ScheduleError(ValueError):
    pass


def tick_key(tick: datetime) -> str:
    return RUN_KEY_PREFIX + tick.astimezone(UTC).strftime(_KEY_FORMAT)


def tick_of_key(run_key: str) -> datetime:
    text = run_key.removeprefix(RUN_KEY_PREFIX)
    return datetime.strptime(text, _KEY_FORMAT).replace(tzinfo=UTC)


def create_due_runs(engine: EngineDB, now: datetime) -> list[TickOutcome]:
    """Create a run for each due tick of each active scheduled pipeline; cheap when none is due."""
    if now.tzinfo is None:
        raise ValueError(f"now {now.isoformat()} has no time zone; expected an aware datetime")
    with engine.read() as conn:
        pipelines = read_scheduled_pipelines(conn)
        # Before any overseer started, this call is the first look at the schedules.
        first_start = first_overseer_start(conn) or now
    outcomes: list[TickOutcome] = []
    for pipeline in pipelines:
        usable = _usable_schedule(engine, pipeline)
        if usable is None:
            continue
        schedule, after = usable
        if next_after(schedule.cron, after, schedule.zone) <= now:
            outcomes.extend(_create_ticks(engine, pipeline, schedule, after, now, first_start))
    return outcomes


def _usable_schedule(
    engine: EngineDB, pipeline: ScheduledPipeline
) -> tuple[_Schedule, datetime] | None:
    """The schedule and the instant its due ticks follow, or None after warning why not."""
    key = (str(engine.url), pipeline.pipeline_id)
    try:
        schedule = _schedule(pipeline)
        after = _after(pipeline, schedule, pipeline.latest_run_key)
    except _ScheduleError as problem:
        if _warned.get(key) != str(problem):
            _warned[key] = str(problem)
            log.warning(
                "no runs are created for the schedule of pipeline %s (project %s): %s",
                pipeline.pipeline_code,
                pipeline.project_code,
                problem,
            )
        return None
    _warned.pop(key, None)
    return schedule, after


def _schedule(pipeline: ScheduledPipeline) -> _Schedule:
    cron = _cron(pipeline.run_schedule)
    zone = _zone(pipeline)
    if pipeline.start_date is None:
        return _Schedule(cron, zone, None)
    try:
        start = date.fromisoformat(pipeline.start_date[:10])
    except ValueError:
        raise _ScheduleError(
            f"SCHEDULE_START_DATE {pipeline.start_date!r} is not a date; expected YYYY-MM-DD. "
            "Fix SCHEDULE_START_DATE in CFG_PIPELINES, or set it NULL"
        ) from None
    return _Schedule(cron, zone, datetime.combine(start, time.min, zone).astimezone(UTC))


def _cron(text: str) -> CronExpression:
    try:
        cron = _parse_cron(text)
    except ValueError as error:
        problem = str(error)
    else:
        never = cron.never_fires_reason()
        if never is None:
            return cron
        problem = never
    raise _ScheduleError(
        f"RUN_SCHEDULE {text!r} is not usable: {problem}. Set RUN_SCHEDULE in CFG_PIPELINES to "
        "five fields such as '0 6 * * *' or a macro such as @daily, or NULL for manual runs only"
    )


@lru_cache(maxsize=1024)
def _parse_cron(text: str) -> CronExpression:
    return CronExpression.parse(text)


def _zone(pipeline: ScheduledPipeline) -> ZoneInfo:
    own = pipeline.schedule_timezone
    name = own if own is not None else pipeline.project_timezone
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        pass
    if own is not None:
        where = "SCHEDULE_TIMEZONE"
        remedy = "Fix SCHEDULE_TIMEZONE in CFG_PIPELINES, or set it NULL to use the project's"
    else:
        where = "the project's TIMEZONE (SCHEDULE_TIMEZONE is NULL)"
        remedy = "Fix TIMEZONE in CFG_PROJECTS, or set SCHEDULE_TIMEZONE in CFG_PIPELINES"
    raise _ScheduleError(
        f"{where} {name!r} is not an IANA time zone; expected a name such as UTC or "
        f"Europe/Paris. {remedy}"
    )


def _after(pipeline: ScheduledPipeline, schedule: _Schedule, latest_key: str | None) -> datetime:
    """The instant after which ticks are due: the latest tick with a run, else the start."""
    bounds: list[datetime] = []
    if latest_key is not None:
        try:
            bounds.append(tick_of_key(latest_key))
        except ValueError:
            raise _ScheduleError(
                f"its latest schedule run key {latest_key!r} names no tick; expected "
                f"{RUN_KEY_PREFIX}YYYY-MM-DDTHH:MM:SSZ. Only the overseer creates schedule runs: "
                "find what created this one"
            ) from None
    if schedule.start is not None:
        bounds.append(schedule.start - _JUST_BEFORE)
    if not bounds and pipeline.created_at is not None:
        bounds.append(pipeline.created_at)
    if not bounds:
        raise _ScheduleError(
            "it has no CREATE_DATE to count missed ticks from. Set SCHEDULE_START_DATE in "
            "CFG_PIPELINES"
        )
    return max(bounds)


def _create_ticks(
    engine: EngineDB,
    pipeline: ScheduledPipeline,
    schedule: _Schedule,
    after: datetime,
    now: datetime,
    first_start: datetime,
) -> list[TickOutcome]:
    keep = pipeline.max_catchup_runs if pipeline.catchup else 1
    unmissed = None if pipeline.catchup else first_start
    # Counted before the lock: a long gap takes a while to walk, and the lock holds back
    # every caller that finds or creates this pipeline's runs.
    due = _due(schedule, after, now, keep, unmissed)
    with engine.transaction(SCHEDULE_ACTOR) as conn:
        lock_pipeline_runs(conn, pipeline.pipeline_id)
        latest = latest_schedule_run_key(conn, pipeline.pipeline_id)
        if latest != pipeline.latest_run_key:  # another caller created ticks meanwhile
            due = _due(schedule, _after(pipeline, schedule, latest), now, keep, unmissed)
        live = live_runs(conn, pipeline.pipeline_id)
        return _record(conn, pipeline, schedule, due, _blocking_run(live))


def _due(
    schedule: _Schedule, after: datetime, now: datetime, keep: int, unmissed: datetime | None
) -> _Due:
    """The due ticks after ``after``; those before ``unmissed`` that won't run are left out."""
    due = _window(schedule, after, now, keep)
    if unmissed is None:
        return due
    missed = tuple(tick for tick in due.missed if tick >= unmissed)
    return _Due(due.runs, missed, 0, None) if len(missed) < len(due.missed) else due


def _window(schedule: _Schedule, after: datetime, now: datetime, keep: int) -> _Due:
    window: deque[datetime] = deque(maxlen=keep + MAX_SKIPPED_PER_CALL)
    unrecorded = 0
    first: datetime | None = None
    last: datetime | None = None
    for tick in ticks_between(schedule.cron, after, now, schedule.zone):
        if len(window) == window.maxlen:
            unrecorded += 1
            first = window[0] if first is None else first
            last = window[0]
        window.append(tick)
    ticks = tuple(window)
    split = max(len(ticks) - keep, 0)
    span = (first, last) if first is not None and last is not None else None
    return _Due(ticks[split:], ticks[:split], unrecorded, span)


def _blocking_run(live: Sequence[LiveRun]) -> int | None:
    """The live run a new tick would overlap: the one in progress, else the oldest queued."""
    for row in live:
        if row.status is RunStatus.IN_PROGRESS:
            return row.pipeline_run_id
    return live[0].pipeline_run_id if live else None


def _record(
    conn: EngineConnection,
    pipeline: ScheduledPipeline,
    schedule: _Schedule,
    due: _Due,
    blocker: int | None,
) -> list[TickOutcome]:
    created = [
        _tick_run(conn, pipeline, schedule, tick, _missed_message(due, index))
        for index, tick in enumerate(due.missed)
    ]
    # Overlap is judged against runs live before this call: the ticks created together here
    # are one catch-up batch, which the overseer admits one run at a time.
    overlapped = None
    if blocker is not None and not pipeline.queue_on_overlap:
        overlapped = f"previous run {blocker} still active"
    created += [_tick_run(conn, pipeline, schedule, tick, overlapped) for tick in due.runs]
    return [outcome for outcome in created if outcome is not None]


def _missed_message(due: _Due, index: int) -> str:
    # The oldest recorded tick borders the ones left out, so it says what they were.
    if index > 0 or due.unrecorded_span is None:
        return MISSED
    first, last = (tick_key(tick).removeprefix(RUN_KEY_PREFIX) for tick in due.unrecorded_span)
    return (
        f"{MISSED}; {due.unrecorded} older missed ticks, {first} to {last}, were not recorded "
        f"(at most {MAX_SKIPPED_PER_CALL} are)"
    )


def _tick_run(
    conn: EngineConnection,
    pipeline: ScheduledPipeline,
    schedule: _Schedule,
    tick: datetime,
    skip_message: str | None,
) -> TickOutcome | None:
    """Create the tick's run, SKIPPED when ``skip_message`` says why; None if it exists already."""
    key = tick_key(tick)
    try:
        run_id = create_run(
            conn,
            pipeline_id=pipeline.pipeline_id,
            run_key=key,
            trigger_kind=TriggerKind.SCHEDULE,
            run_date=tick.astimezone(schedule.zone).date(),
            actor=SCHEDULE_ACTOR,
            priority=pipeline.priority,
        )
    except RunStateError:
        return None  # a run of another kind took this key; the tick has its run
    outcome = RunStatus.QUEUED
    if skip_message is not None:
        skip_run(conn, run_id, SCHEDULE_ACTOR, message=skip_message)
        outcome = RunStatus.SKIPPED
    return TickOutcome(pipeline.pipeline_code, run_id, key, tick, outcome, skip_message)
