"""The overseer's row in AUD_OVERSEERS, the runs it looks at, and its wake-ups (its
leadership is enginedb/leadership)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.actor import Actor
from etl_craft.core.enums import RunStatus
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, EngineDB


@dataclass(frozen=True)
class ActiveOverseer:
    overseer_id: str
    host: str
    pid: int
    heartbeat_at: datetime | None


@dataclass(frozen=True)
class LiveRun:
    pipeline_run_id: int
    pipeline_id: int
    status: RunStatus
    owner_id: str | None
    lease_expired: bool
    queued_at: datetime | None
    gated: bool = False  # QUEUED, and its pipeline depends on others: admitted through gates

    def free_for(self, owner: str) -> bool:
        """Nobody else holds it: unowned, ours, or its holder's lease ran out."""
        return self.owner_id is None or self.owner_id == owner or self.lease_expired


def register_overseer(conn: EngineConnection, overseer_id: str, version: str) -> None:
    host, pid = overseer_id.split(":", maxsplit=1)[0], os.getpid()
    conn.run("register_overseer", overseer_id=overseer_id, host=host, pid=pid, version=version)


def beat_overseer(conn: EngineConnection, overseer_id: str) -> None:
    conn.run("beat_overseer", overseer_id=overseer_id)


def stop_overseer(engine: EngineDB, actor: Actor, overseer_id: str) -> None:
    with engine.transaction(actor) as conn:
        conn.run("stop_overseer", overseer_id=overseer_id)


def active_overseer(conn: EngineConnection) -> ActiveOverseer | None:
    row = conn.one("latest_overseer")
    if row is None:
        return None
    return ActiveOverseer(
        str(row["overseer_id"]), str(row["host"]), int(row["pid"]), as_utc(row["heartbeat_at"])
    )


def live_runs(conn: EngineConnection) -> Iterator[LiveRun]:
    for row in conn.all("overseer_runs"):
        yield LiveRun(
            pipeline_run_id=int(row["pipeline_run_id"]),
            pipeline_id=int(row["pipeline_id"]),
            status=RunStatus(row["status"]),
            owner_id=row["owner_id"],
            lease_expired=bool(row["lease_expired"]),
            queued_at=as_utc(row["queued_at"]),
            gated=bool(row["gated"]),
        )


def latest_metadata_change(conn: EngineConnection) -> int | None:
    """A version of the whole metadata: it moves whenever a CFG_ row changes."""
    found = conn.scalar("latest_metadata_change")
    return None if found is None else int(found)


def runs_of_news(
    conn: EngineConnection, attempt_ids: Iterable[int], task_run_ids: Iterable[int]
) -> set[int]:
    """The runs that these notified attempts and task runs belong to (PostgreSQL: only it
    notifies)."""
    rows = conn.all(
        "overseer_runs_of_news",
        attempt_ids=json.dumps(sorted(set(attempt_ids))),
        task_run_ids=json.dumps(sorted(set(task_run_ids))),
    )
    return {int(row["pipeline_run_id"]) for row in rows}
