"""What keeps queued work from moving: no `etl-craft server` leading, or a pool whose workers
are all gone while attempts wait in it.

A server leads when its overseer holds the current leadership epoch, has not stopped and beat
within one lease; a worker is alive when it is ACTIVE and beat within one lease. A pool that
never had a worker is served by the server's local provider, so only the server's absence
stalls it. Each stall is said once, here, for every page and document that shows it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar
from zoneinfo import ZoneInfo

from etl_craft.config.owner import lease_timing
from etl_craft.config.settings import load_settings
from etl_craft.core.errors import ConfigurationError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.overview import (
    engine_now,
    fresh_leader,
    last_overseer_beat,
    project_attempts,
    project_id_of,
    project_runs,
    waiting_pools,
)
from etl_craft.operations.context import OperationContext

DEFAULT_FRESH_SECONDS = 60.0


@dataclass(frozen=True)
class StalledPool:
    pool: str
    queued_attempts: int  # due now
    last_heartbeat_at: datetime | None  # of any of its workers


@dataclass(frozen=True)
class Stalls:
    schema: ClassVar[str] = "etl-craft/stalls/1"
    checked_at: datetime
    leader: str | None  # the leading overseer's id, when one leads
    last_leader_heartbeat_at: datetime | None  # of any overseer, when none leads
    queued_runs: int
    queued_attempts: int  # due now
    pools: tuple[StalledPool, ...]  # pools with due attempts and no live worker
    messages: tuple[str, ...]  # one sentence per stall, with its remedy

    @property
    def stalled(self) -> bool:
        return bool(self.messages)


def stalls(ctx: OperationContext) -> Stalls:
    fresh = _fresh_seconds(ctx)
    with ctx.engine.read() as conn:
        now = engine_now(conn)
        leader = fresh_leader(conn, fresh)
        last_beat = None if leader else last_overseer_beat(conn)
        pools = waiting_pools(conn, fresh)
        project_id = project_id_of(conn, ctx.project_code)
        runs = project_runs(conn, project_id, now)
        attempts = project_attempts(conn, project_id)
    stalled = tuple(
        StalledPool(str(row["pool"]), int(row["due"]), as_utc(row["last_heartbeat"]))
        for row in pools
        if int(row["workers"]) and not int(row["live"])
    )
    found = Stalls(
        checked_at=now,
        leader=None if leader is None else str(leader["overseer_id"]),
        last_leader_heartbeat_at=last_beat,
        queued_runs=int(runs["queued"] or 0),
        queued_attempts=int(attempts["due"] or 0),
        pools=stalled,
        messages=(),
    )
    return _with_messages(found, ZoneInfo(ctx.timezone))


def _fresh_seconds(ctx: OperationContext) -> float:
    """One lease: an owner that misses it is taken for gone by the others too."""
    with contextlib.suppress(ConfigurationError):
        return lease_timing(load_settings(), ctx.connector)[0]
    return DEFAULT_FRESH_SECONDS


def _with_messages(found: Stalls, zone: ZoneInfo) -> Stalls:
    said = [] if found.leader else [_no_leader(found, zone)]
    said += [_no_worker(pool, zone) for pool in found.pools]
    return dataclasses.replace(found, messages=tuple(said))


def _no_leader(found: Stalls, zone: ZoneInfo) -> str:
    since = _since(found.last_leader_heartbeat_at, zone, "no server has ever run")
    parts = [
        _plural(count, noun)
        for count, noun in ((found.queued_runs, "run"), (found.queued_attempts, "attempt"))
        if count
    ]
    one = len(parts) == 1 and (found.queued_runs or found.queued_attempts) == 1
    verb = "is" if one else "are"
    waiting = f"{' and '.join(parts)} {verb} queued and waiting; " if parts else ""
    return (
        f"No etl-craft server leads ({since}): {waiting}schedules, Run now and reruns "
        "are not acted on until one does. Start `etl-craft server`."
    )


def _no_worker(pool: StalledPool, zone: ZoneInfo) -> str:
    since = _since(pool.last_heartbeat_at, zone, "none ever did")
    queued = _plural(pool.queued_attempts, "attempt")
    verb = "is" if pool.queued_attempts == 1 else "are"
    return (
        f"{queued} {verb} queued for pool {pool.pool} and no worker has a heartbeat "
        f"({since}): start `etl-craft worker --pool {pool.pool}`."
    )


def _since(then: datetime | None, zone: ZoneInfo, never: str) -> str:
    if then is None:
        return never
    return "last heartbeat at " + then.astimezone(zone).strftime("%Y-%m-%d %H:%M")


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
