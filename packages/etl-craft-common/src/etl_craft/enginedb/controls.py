"""Operator controls a supervisor obeys: pauses and pending cancellations, and their record."""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.core.actor import Actor
from etl_craft.enginedb.connection import EngineReads


@dataclass(frozen=True)
class RunControls:
    paused: bool
    cancel_pending: bool
    reopened: bool  # reopened after it ended: its next SUCCESS is a repair


def read_controls(conn: EngineReads, run_id: int) -> RunControls:
    row = conn.one("run_controls", pipeline_run_id=run_id)
    if row is None:
        return RunControls(paused=False, cancel_pending=False, reopened=False)
    return RunControls(
        paused=int(row["open_pauses"]) > 0,
        cancel_pending=row["last_control"] == "CANCEL",
        reopened=row["last_control"] == "REOPEN",
    )


def record_intervention(
    conn: EngineReads,
    actor: Actor,
    *,
    run_id: int,
    kind: str,
    reason: str,
    task_run_id: int | None = None,
    from_status: str | None = None,
    to_status: str | None = None,
    rows_written: int | None = None,
) -> int:
    """One AUD_RUN_INTERVENTIONS row; a CANCEL on the run stays pending until a later REOPEN."""
    return int(
        conn.scalar(
            "record_intervention",
            pipeline_run_id=run_id,
            task_run_id=task_run_id,
            kind=kind,
            from_status=from_status,
            to_status=to_status,
            rows_written=rows_written,
            reason=reason,
            actor=actor.name,
            actor_kind=actor.kind.value,
        )
    )
