"""A project's health at a glance: what runs, what waits, what failed or missed its SLA today.

"Today" is the project's day (Orchestration.timezone), counted from its midnight; ages are
measured on the Engine DB's clock, which every process shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any, ClassVar
from zoneinfo import ZoneInfo

from etl_craft.core.time import as_utc
from etl_craft.enginedb.overview import engine_now, project_attempts, project_id_of, project_runs
from etl_craft.operations.context import OperationContext
from etl_craft.operations.inspect import list_pipelines


@dataclass(frozen=True)
class ProjectHealth:
    schema: ClassVar[str] = "etl-craft/project-health/1"
    project: str
    timezone: str
    day: date  # the project's today
    checked_at: datetime  # the Engine DB's clock
    running: int  # runs IN-PROGRESS
    executing: int  # runs IN-PROGRESS with a task attempt claimed or running now
    queued_runs: int  # runs QUEUED for the server to admit
    oldest_queued_run_seconds: float | None
    failed_today: int  # runs that ended FAILED today
    sla_missed_today: int  # runs that ended today past their pipeline's SLA
    over_sla_now: int  # runs IN-PROGRESS past their pipeline's SLA
    queued_attempts: int  # due: a worker or supervisor may claim them now
    delayed_attempts: int  # QUEUED retries waiting out their delay
    held_attempts: int  # CLAIMED or RUNNING
    oldest_queued_attempt_seconds: float | None
    pipelines: int
    paused_pipelines: int
    blocked_pipelines: int  # their metadata keeps them from running (validate says why)


def project_health(ctx: OperationContext) -> ProjectHealth:
    listed = list_pipelines(ctx)
    with ctx.engine.read() as conn:
        project_id = project_id_of(conn, ctx.project_code)
        now = engine_now(conn)
        day, midnight = _today(now, ctx.timezone)
        runs = project_runs(conn, project_id, midnight)
        attempts = project_attempts(conn, project_id)
    return ProjectHealth(
        project=ctx.project_code,
        timezone=ctx.timezone,
        day=day,
        checked_at=now,
        running=_count(runs["running"]),
        executing=_count(runs["executing"]),
        queued_runs=_count(runs["queued"]),
        oldest_queued_run_seconds=_age(now, runs["oldest_queued"]),
        failed_today=_count(runs["failed"]),
        sla_missed_today=_count(runs["sla_missed"]),
        over_sla_now=_count(runs["over_sla"]),
        queued_attempts=_count(attempts["due"]),
        delayed_attempts=_count(attempts["delayed"]),
        held_attempts=_count(attempts["held"]),
        oldest_queued_attempt_seconds=_age(now, attempts["oldest_due"]),
        pipelines=len(listed.pipelines),
        paused_pipelines=sum(1 for p in listed.pipelines if p.paused),
        blocked_pipelines=sum(1 for p in listed.pipelines if p.blocking_findings),
    )


def _today(now: datetime, zone: str) -> tuple[date, datetime]:
    """The project's date at ``now`` and its midnight, in UTC."""
    local = now.astimezone(ZoneInfo(zone))
    midnight = datetime.combine(local.date(), time(), tzinfo=local.tzinfo)
    return local.date(), midnight.astimezone(ZoneInfo("UTC"))


def _count(value: Any) -> int:
    return 0 if value is None else int(value)  # SUM over no row is NULL


def _age(now: datetime, then: Any) -> float | None:
    found = as_utc(then)
    return None if found is None else max(0.0, (now - found).total_seconds())
