"""Reading one attempt of a task run, and where its log file is."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from etl_craft.core.enums import AttemptStatus
from etl_craft.core.errors import NotFoundError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.attempts import attempt_record, latest_attempt_id
from etl_craft.operations.context import OperationContext
from etl_craft.runtime.identity import HOST


@dataclass(frozen=True)
class AttemptView:
    schema: ClassVar[str] = "etl-craft/attempt/1"
    attempt_id: int
    attempt_number: int
    status: AttemptStatus
    run_id: int
    task_run_id: int
    pipeline_code: str
    task_code: str
    pool: str
    slot_kind: str
    queued_at: datetime | None
    not_before: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    owner_id: str | None
    lease_expires_at: datetime | None  # while it runs: when its owner must renew it by
    host: str | None
    exit_code: int | None
    rows_written: int | None
    error: str | None
    outcome_source: str | None
    requested_by: str
    ended_by: str | None
    cancel_requested_at: datetime | None
    has_log: bool


def attempt(ctx: OperationContext, attempt_id: int) -> AttemptView:
    row = _row(ctx, attempt_id)
    times = (
        "queued_at",
        "not_before",
        "started_at",
        "ended_at",
        "cancel_requested_at",
        "lease_expires_at",
    )
    fields: dict[str, Any] = {
        field.name: as_utc(row[field.name]) if field.name in times else row[field.name]
        for field in dataclasses.fields(AttemptView)
        if field.name not in ("status", "has_log")
    }
    return AttemptView(
        **fields,
        status=AttemptStatus(row["status"]),
        has_log=row["log_path"] is not None,
    )


def attempt_log(ctx: OperationContext, attempt_id: int) -> Path:
    """The attempt's log file; NotFoundError when it has none, or none is left on this host."""
    row = _row(ctx, attempt_id)
    if row["log_path"] is None:
        raise NotFoundError(
            f"attempt {attempt_id} has no log file ({row['status']}): its task process has not "
            "started, or it ran where no log is kept"
        )
    path = Path(str(row["log_path"]))
    if path.is_file():
        return path
    # The messages reach the API and the UI's viewers: they never name a path on the server.
    if row["host"] not in (None, HOST):
        raise NotFoundError(
            f"the log file of attempt {attempt_id} is on host {row['host']}, not on "
            f"this one ({HOST}); read it there with etl-craft logs --attempt {attempt_id}"
        )
    raise NotFoundError(
        f"the log file of attempt {attempt_id} is gone from this host: it was removed "
        "after the attempt ended; its last lines are kept in AUD_TASK_RUN_LOG.TASK_LOG"
    )


def latest_attempt(ctx: OperationContext, run_id: int, task_code: str) -> int:
    """The id of the newest attempt of task ``task_code`` in run ``run_id``."""
    with ctx.engine.read() as conn:
        found = latest_attempt_id(conn, run_id, task_code, ctx.project_code)
    if found is None:
        raise NotFoundError(
            f"run {run_id} of project {ctx.project_code} has no attempt of task {task_code}; "
            "etl-craft status --run shows the run's tasks, and a task that has not started "
            "has no log yet"
        )
    return found


def _row(ctx: OperationContext, attempt_id: int) -> Mapping[str, Any]:
    with ctx.engine.read() as conn:
        row = attempt_record(conn, attempt_id, ctx.project_code)
    if row is None:
        raise NotFoundError(
            f"project {ctx.project_code} has no attempt {attempt_id}; etl-craft status shows a "
            "run's tasks, and explain a task's attempts"
        )
    return row
