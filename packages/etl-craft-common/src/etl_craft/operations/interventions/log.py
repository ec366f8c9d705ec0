"""The interventions of a project, newest first: who changed what, when and why.

Run and task changes (mark, cancel, reopen, rerun, skip, force, backfill) carry the status
they changed from and to; pauses and resumes of a pipeline, or of the whole project, are
listed with them. Every one was made by a named actor and (but for a resume) for a reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from etl_craft.core.time import as_utc
from etl_craft.enginedb.overview import interventions, project_id_of
from etl_craft.operations.context import OperationContext
from etl_craft.operations.runs.views import pipeline_id_of

DEFAULT_LIMIT = 100


@dataclass(frozen=True)
class InterventionEntry:
    at: datetime
    actor: str
    actor_kind: str
    kind: str  # AUD_RUN_INTERVENTIONS.KIND (MARK, CANCEL, RERUN, ...), or PAUSE or RESUME
    pipeline_code: str | None  # None: the whole project was paused or resumed
    run_id: int | None
    task_code: str | None
    from_status: str | None
    to_status: str | None
    rows_written: int | None
    reason: str | None


@dataclass(frozen=True)
class InterventionLog:
    schema: ClassVar[str] = "etl-craft/interventions/1"
    project_code: str
    pipeline_code: str | None
    entries: tuple[InterventionEntry, ...]


def intervention_log(
    ctx: OperationContext, pipeline_code: str | None = None, limit: int = DEFAULT_LIMIT
) -> InterventionLog:
    with ctx.engine.read() as conn:
        project_id = project_id_of(conn, ctx.project_code)
        pipeline_id = None
        if pipeline_code is not None:
            pipeline_id = pipeline_id_of(conn, ctx.project_code, pipeline_code, inactive=True)
        rows = interventions(conn, project_id, pipeline_id, limit)
    entries = tuple(
        InterventionEntry(
            at=_instant(row["at"]),
            actor=str(row["actor"]),
            actor_kind=str(row["actor_kind"]),
            kind=str(row["kind"]),
            pipeline_code=row["pipeline_code"],
            run_id=None if row["run_id"] is None else int(row["run_id"]),
            task_code=row["task_code"],
            from_status=row["from_status"],
            to_status=row["to_status"],
            rows_written=None if row["rows_written"] is None else int(row["rows_written"]),
            reason=row["reason"],
        )
        for row in rows
    )
    return InterventionLog(ctx.project_code, pipeline_code, entries)


def _instant(value: Any) -> datetime:
    found = as_utc(value)
    assert found is not None
    return found
