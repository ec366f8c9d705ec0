"""Reading one attempt of a task run, and where its log file is."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from etl_craft.config.settings import load_settings
from etl_craft.core.enums import AttemptStatus
from etl_craft.core.errors import NotFoundError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.attempts import attempt_log_endpoint, attempt_record, latest_attempt_id
from etl_craft.operations.context import OperationContext
from etl_craft.operations.logs.sources import (
    LocalLog,
    LogSource,
    StoredLog,
    WorkerLog,
    is_stored,
    stored_key,
)
from etl_craft.runtime.identity import HOST
from etl_craft.runtime.logfile import local_log_path


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


def attempt_log(ctx: OperationContext, attempt_id: int) -> LogSource:
    """Where the attempt's log is read from; NotFoundError when it has none, or none is left
    where it should be."""
    row = _row(ctx, attempt_id)
    if row["log_path"] is None:
        raise NotFoundError(
            f"attempt {attempt_id} has no log file ({row['status']}): its task process has not "
            "started, or it ran where no log is kept"
        )
    if is_stored(str(row["log_path"])):
        return _stored_log(ctx, attempt_id, row)
    path = Path(str(row["log_path"]))
    if path.is_file():
        return LocalLog(path)
    remote = _from_worker(ctx, attempt_id, row)
    if remote is not None:
        return remote
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


def _stored_log(ctx: OperationContext, attempt_id: int, row: Mapping[str, Any]) -> LogSource:
    """A log its owner uploads when the attempt ends: from the store once it ended; while it
    runs, from the owner's file when the owner runs on this host."""
    key = stored_key(str(row["log_path"]), ctx.log_store, attempt_id)
    ended = AttemptStatus(row["status"]).terminal
    local = local_log_path(ctx.attempt_logs_dir.parent, key)
    if not ended and row["host"] in (None, HOST) and local.is_file():
        return LocalLog(local)
    remote = None if ended else _from_worker(ctx, attempt_id, row)
    if remote is not None:
        return remote
    if not ended:
        raise NotFoundError(
            f"attempt {attempt_id} runs on host {row['host']}, which writes its log until it "
            f"ends and then uploads it to the Logs store; read it once the attempt ended, or "
            f"on that host with etl-craft logs --attempt {attempt_id}"
        )
    assert ctx.log_store is not None  # stored_key refuses a process without one
    if not ctx.log_store.exists(key):
        if local.is_file():  # its upload failed here: the owner kept it
            return LocalLog(local)
        raise NotFoundError(
            f"the log of attempt {attempt_id} is not in the Logs store: its owner on host "
            f"{row['host']} could not upload it (its own log says why), or retention removed "
            "it; its last lines are kept in AUD_TASK_RUN_LOG.TASK_LOG"
        )
    return StoredLog(ctx.log_store, key)


def _from_worker(
    ctx: OperationContext, attempt_id: int, row: Mapping[str, Any]
) -> WorkerLog | None:
    """A running attempt's log from the worker that runs it, when it serves logs and this
    process holds the worker token."""
    if AttemptStatus(row["status"]).terminal:
        return None
    token = load_settings().worker_token
    with ctx.engine.read_only() as conn:
        endpoint = attempt_log_endpoint(conn, attempt_id)
    if endpoint is None or token is None:
        return None
    return WorkerLog(endpoint, attempt_id, token)


def latest_attempt(ctx: OperationContext, run_id: int, task_code: str) -> int:
    """The id of the newest attempt of task ``task_code`` in run ``run_id``."""
    with ctx.engine.read_only() as conn:
        found = latest_attempt_id(conn, run_id, task_code, ctx.project_code)
    if found is None:
        raise NotFoundError(
            f"run {run_id} of project {ctx.project_code} has no attempt of task {task_code}; "
            "etl-craft status --run shows the run's tasks, and a task that has not started "
            "has no log yet"
        )
    return found


def _row(ctx: OperationContext, attempt_id: int) -> Mapping[str, Any]:
    with ctx.engine.read_only() as conn:
        row = attempt_record(conn, attempt_id, ctx.project_code)
    if row is None:
        raise NotFoundError(
            f"project {ctx.project_code} has no attempt {attempt_id}; etl-craft status shows a "
            "run's tasks, and explain a task's attempts"
        )
    return row
