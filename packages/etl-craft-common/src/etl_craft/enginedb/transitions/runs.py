"""Status changes of pipeline runs, and their leases."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date

from etl_craft.core.actor import Actor
from etl_craft.core.enums import RunStatus, TriggerKind
from etl_craft.core.errors import RunStateError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.transitions._apply import apply, notify
from etl_craft.enginedb.transitions.table import Entity


def create_run(
    conn: EngineConnection,
    *,
    pipeline_id: int,
    run_key: str,
    trigger_kind: TriggerKind,
    run_date: date,
    actor: Actor,
    priority: int = 0,
    config_sha256: str | None = None,
) -> int:
    """Insert a QUEUED run; refuse when the pipeline already has a run with this key."""
    row = conn.one(
        "transition_create_run",
        pipeline_id=pipeline_id,
        run_key=run_key,
        trigger_kind=trigger_kind.value,
        run_date=run_date,
        priority=priority,
        config_sha256=config_sha256,
        actor=actor.name,
        actor_kind=actor.kind.value,
    )
    if row is None:
        existing = conn.one("run_by_key", pipeline_id=pipeline_id, run_key=run_key)
        found = f"run {existing['pipeline_run_id']} ({existing['status']})" if existing else "a run"
        raise RunStateError(
            f"pipeline {pipeline_id} already has {found} with run key {run_key!r}; a run key "
            "names one run: act on that run with --run, or use another key"
        )
    run_id = int(row["pipeline_run_id"])
    notify(conn, Entity.RUN, run_id, RunStatus.QUEUED.value)
    return run_id


def admit_run(conn: EngineConnection, run_id: int, actor: Actor) -> None:
    apply(conn, Entity.RUN, "admit_run", run_id, actor)


def admit_runs(conn: EngineConnection, run_ids: Sequence[int], actor: Actor) -> list[int]:
    """``admit_run`` for many runs in one statement, with its guard (STATUS = QUEUED): the ids
    admitted, each notified; a run another caller admitted, skipped or cancelled meanwhile is
    left as it is and out of the answer, where ``admit_run`` would refuse it."""
    if not run_ids:
        return []
    rows = conn.all(
        "transition_admit_runs",
        run_ids=json.dumps([int(run_id) for run_id in run_ids]),
        actor=actor.name,
        actor_kind=actor.kind.value,
    )
    admitted = [int(row["pipeline_run_id"]) for row in rows]
    for run_id in admitted:
        notify(conn, Entity.RUN, run_id, RunStatus.IN_PROGRESS.value)
    return admitted


def skip_run(conn: EngineConnection, run_id: int, actor: Actor, *, message: str) -> None:
    apply(conn, Entity.RUN, "skip_run", run_id, actor, message=message)


def finish_run(
    conn: EngineConnection,
    run_id: int,
    actor: Actor,
    *,
    status: RunStatus,
    message: str | None = None,
    sla_status: str | None = None,
    new_revision: bool = False,
) -> None:
    _require(status, {RunStatus.SUCCESS, RunStatus.FAILED}, "finish_run")
    apply(
        conn,
        Entity.RUN,
        "finish_run",
        run_id,
        actor,
        status=status.value,
        message=message,
        sla_status=sla_status,
        revision_step=1 if new_revision else 0,
    )


def cancel_run(conn: EngineConnection, run_id: int, actor: Actor, *, message: str) -> None:
    apply(conn, Entity.RUN, "cancel_run", run_id, actor, message=message)


def finalize_remote_run(
    conn: EngineConnection, run_id: int, actor: Actor, *, status: RunStatus, message: str
) -> None:
    _require(
        status, {RunStatus.SUCCESS, RunStatus.FAILED, RunStatus.SKIPPED}, "finalize_remote_run"
    )
    apply(
        conn,
        Entity.RUN,
        "finalize_remote_run",
        run_id,
        actor,
        status=status.value,
        message=message,
    )


def reopen_run(conn: EngineConnection, run_id: int, actor: Actor, *, message: str) -> None:
    apply(conn, Entity.RUN, "reopen_run", run_id, actor, message=message)


def mark_run(
    conn: EngineConnection, run_id: int, actor: Actor, *, status: RunStatus, message: str
) -> None:
    _require(status, {RunStatus.SUCCESS, RunStatus.FAILED, RunStatus.SKIPPED}, "mark_run")
    apply(conn, Entity.RUN, "mark_run", run_id, actor, status=status.value, message=message)


def claim_run_lease(
    conn: EngineConnection, run_id: int, actor: Actor, *, owner_id: str, lease_seconds: float
) -> None:
    apply(
        conn,
        Entity.RUN,
        "claim_run_lease",
        run_id,
        actor,
        owner_id=owner_id,
        lease_seconds=lease_seconds,
    )


def renew_run_lease(
    conn: EngineConnection, run_id: int, actor: Actor, *, owner_id: str, lease_seconds: float
) -> None:
    apply(
        conn,
        Entity.RUN,
        "renew_run_lease",
        run_id,
        actor,
        owner_id=owner_id,
        lease_seconds=lease_seconds,
    )


def release_run_lease(conn: EngineConnection, run_id: int, actor: Actor, *, owner_id: str) -> None:
    apply(conn, Entity.RUN, "release_run_lease", run_id, actor, owner_id=owner_id)


def _require(status: RunStatus, allowed: set[RunStatus], transition: str) -> None:
    if status not in allowed:
        names = ", ".join(sorted(item.value for item in allowed))
        raise ValueError(f"{transition} takes {names}, not {status.value}")
