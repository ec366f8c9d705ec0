"""Reads about attempts: what a task process runs, and what the reconciler must settle."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from types import MappingProxyType
from typing import Any

from etl_craft.core.enums import AttemptStatus, Handler
from etl_craft.core.errors import NotFoundError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, EngineReads, Row


@dataclass(frozen=True)
class AttemptInvocation:
    attempt_id: int
    attempt_number: int
    status: AttemptStatus
    owner_id: str | None
    task_run_id: int
    pipeline_run_id: int
    pipeline_id: int
    task_id: int
    project_code: str
    pipeline_code: str
    task_code: str
    handler: Handler
    run_key: str
    run_date: date
    parameters: Mapping[str, str | None]
    pipeline_parameters: Mapping[str, str | None]
    # The task's stored offset as AUD_TASK_OFFSETS holds it (enginedb/offsets decodes it).
    offset_type: str | None = None
    offset_value: str | None = None
    # PARAMETER_TYPE of each pipeline parameter: how `$$param.NAME` in SQL reads its value.
    pipeline_parameter_types: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({})
    )
    # The project bundle its run pinned (AUD_PROJECT_BUNDLES); None: the owner's project folder.
    bundle_id: int | None = None


@dataclass(frozen=True)
class ExpiredAttempt:
    attempt_id: int
    attempt_number: int
    status: AttemptStatus
    owner_id: str
    lease_expires_at: datetime
    host: str | None
    pid: int | None
    process_start: str | None
    handler: Handler


def read_invocation(conn: EngineConnection, attempt_id: int) -> AttemptInvocation:
    found = read_invocations(conn, [attempt_id])
    if attempt_id not in found:
        raise NotFoundError(
            f"attempt {attempt_id} does not exist in this Engine DB; check the attempt id and "
            "that the task process was given the same Engine DB as its owner"
        )
    return found[attempt_id]


def read_invocations(
    conn: EngineConnection, attempt_ids: Sequence[int]
) -> dict[int, AttemptInvocation]:
    """The invocations of several attempts in two statements, by attempt id; an id that names
    no attempt is left out."""
    if not attempt_ids:
        return {}
    ids = list(attempt_ids)
    parameters: dict[int, list[Row]] = defaultdict(list)
    for found in conn.all("attempt_parameters", attempt_id_list=ids):
        parameters[int(found["attempt_id"])].append(found)
    return {
        int(row["attempt_id"]): _invocation(row, parameters[int(row["attempt_id"])])
        for row in conn.all("attempt_invocations", attempt_id_list=ids)
    }


def _invocation(row: Row, found: list[Row]) -> AttemptInvocation:
    run_date = row["run_date"]
    params = [p for p in found if p["scope"] == "task"]
    pipeline_params = [p for p in found if p["scope"] == "pipeline"]
    return AttemptInvocation(
        attempt_id=int(row["attempt_id"]),
        attempt_number=int(row["attempt_number"]),
        status=AttemptStatus(row["status"]),
        owner_id=row["owner_id"],
        task_run_id=int(row["task_run_id"]),
        pipeline_run_id=int(row["pipeline_run_id"]),
        pipeline_id=int(row["pipeline_id"]),
        task_id=int(row["task_id"]),
        project_code=str(row["project_code"]),
        pipeline_code=str(row["pipeline_code"]),
        task_code=str(row["task_code"]),
        handler=Handler(row["handler"]),
        run_key=str(row["run_key"]),
        run_date=run_date if isinstance(run_date, date) else date.fromisoformat(str(run_date)),
        parameters=MappingProxyType({str(p["name"]): p["value"] for p in params}),
        pipeline_parameters=MappingProxyType({str(p["name"]): p["value"] for p in pipeline_params}),
        pipeline_parameter_types=MappingProxyType(
            {str(p["name"]): str(p["type"]) for p in pipeline_params}
        ),
        offset_type=row["offset_type"],
        offset_value=row["offset_value"],
        bundle_id=None if row["bundle_id"] is None else int(row["bundle_id"]),
    )


def encode_invocation(invocation: AttemptInvocation) -> str:
    """The invocation as JSON, for an owner to hand to the task process it starts."""
    fields = {name: getattr(invocation, name) for name in AttemptInvocation.__dataclass_fields__}
    fields.update(
        status=invocation.status.value,
        handler=invocation.handler.value,
        run_date=invocation.run_date.isoformat(),
        parameters=dict(invocation.parameters),
        pipeline_parameters=dict(invocation.pipeline_parameters),
        pipeline_parameter_types=dict(invocation.pipeline_parameter_types),
    )
    return json.dumps(fields)


def decode_invocation(text: str) -> AttemptInvocation:
    fields = json.loads(text)
    fields.update(
        status=AttemptStatus(fields["status"]),
        handler=Handler(fields["handler"]),
        run_date=date.fromisoformat(fields["run_date"]),
        parameters=MappingProxyType(fields["parameters"]),
        pipeline_parameters=MappingProxyType(fields["pipeline_parameters"]),
        pipeline_parameter_types=MappingProxyType(fields.get("pipeline_parameter_types", {})),
    )
    return AttemptInvocation(**fields)


def expired_attempts(conn: EngineConnection) -> list[ExpiredAttempt]:
    return [
        ExpiredAttempt(
            attempt_id=int(row["attempt_id"]),
            attempt_number=int(row["attempt_number"]),
            status=AttemptStatus(row["status"]),
            owner_id=str(row["owner_id"]),
            lease_expires_at=as_utc(row["lease_expires_at"]) or datetime.min,
            host=row["host"],
            pid=row["pid"],
            process_start=row["process_start"],
            handler=Handler(row["handler"]),
        )
        for row in conn.all("expired_attempts")
    ]


@dataclass(frozen=True)
class CancelRequest:
    attempt_id: int
    requested_at: datetime


def cancel_requests(conn: EngineConnection, owner_id: str) -> list[CancelRequest]:
    """The owner's live attempts whose cancellation was requested."""
    return [
        CancelRequest(int(row["attempt_id"]), as_utc(row["cancel_requested_at"]) or datetime.min)
        for row in conn.all("cancel_requests_of_owner", owner_id=owner_id)
    ]


def attempt_status(conn: EngineConnection, attempt_id: int) -> AttemptStatus | None:
    """The attempt's current status; None when there is no such attempt."""
    row = conn.one("attempt_status", attempt_id=attempt_id)
    return None if row is None else AttemptStatus(row["status"])


def latest_attempt_id(
    conn: EngineReads, run_id: int, task_code: str, project_code: str
) -> int | None:
    """The newest attempt of the task in a run of the project; None before its first."""
    row = conn.one(
        "latest_attempt_of_task", run_id=run_id, task_code=task_code, project_code=project_code
    )
    return None if row is None else int(row["attempt_id"])


def attempt_record(
    conn: EngineReads, attempt_id: int, project_code: str
) -> Mapping[str, Any] | None:
    """Everything the attempt view shows of an attempt of the project, by column; None when the
    project has no such attempt."""
    row = conn.one("attempt_view", attempt_id=attempt_id, project_code=project_code)
    return None if row is None else dict(row)


def attempt_log_endpoint(conn: EngineReads, attempt_id: int) -> str | None:
    """Where the worker that runs the attempt serves its log; None: no live worker serves it."""
    row = conn.one("attempt_log_endpoint", attempt_id=attempt_id)
    return None if row is None or row["log_endpoint"] is None else str(row["log_endpoint"])
