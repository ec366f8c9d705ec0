"""What the gates of a run read and write: the upstream runs they judge, the waits they keep
(AUD_GATE_WAITS), the decisions they record and what a finished run consumed by them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from etl_craft.core.actor import Actor
from etl_craft.core.enums import DependencyType, RunStatus, TaskRunStatus
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, EngineReads


@dataclass(frozen=True)
class PipelineGateDependency:
    """An active dependency of a pipeline on another pipeline, which its pipeline gate judges."""

    pipeline_dependency_id: int
    upstream_id: int
    upstream_code: str
    dependency_type: DependencyType
    consume_repairs: bool


@dataclass(frozen=True)
class UpstreamRun:
    """The newest non-backfill run of an upstream pipeline."""

    pipeline_run_id: int
    status: RunStatus
    revision: int
    rows_written: int


@dataclass(frozen=True)
class UpstreamTaskRun:
    task_run_id: int
    status: TaskRunStatus
    rows_written: int | None


@dataclass(frozen=True)
class Consumption:
    """The newest upstream run, and its revision, a dependency has consumed."""

    pipeline_run_id: int
    revision: int


@dataclass(frozen=True)
class OpenWait:
    gate_wait_id: int
    next_check_at: datetime | None
    wait_until: datetime | None
    looks: int


@dataclass(frozen=True)
class Decision:
    """What a gate decided for a run's task (task_id None: the pipeline gate), and on which
    upstream run it relied when satisfied."""

    task_id: int | None
    pipeline_dependency_id: int | None
    task_dependency_id: int | None
    selected_run_id: int | None
    selected_task_run_id: int | None
    selected_revision: int | None
    result: str
    reason: str


def pipeline_gate_dependencies(
    conn: EngineReads, pipeline_id: int
) -> tuple[PipelineGateDependency, ...]:
    return tuple(
        PipelineGateDependency(
            pipeline_dependency_id=int(row["pipeline_dependency_id"]),
            upstream_id=int(row["upstream_id"]),
            upstream_code=str(row["upstream_code"]),
            dependency_type=DependencyType(row["dependency_type"]),
            consume_repairs=row["consume_repairs"] == "Y",
        )
        for row in conn.all("pipeline_dependencies_of", pipeline_id=pipeline_id)
    )


def upstream_run(conn: EngineReads, pipeline_id: int) -> UpstreamRun | None:
    row = conn.one("gate_upstream_run", pipeline_id=pipeline_id)
    if row is None:
        return None
    return UpstreamRun(
        pipeline_run_id=int(row["pipeline_run_id"]),
        status=RunStatus(row["status"]),
        revision=int(row["revision"]),
        rows_written=int(row["rows_written"] or 0),
    )


def upstream_task_run(
    conn: EngineReads, pipeline_run_id: int, task_id: int
) -> UpstreamTaskRun | None:
    row = conn.one("gate_upstream_task_run", pipeline_run_id=pipeline_run_id, task_id=task_id)
    if row is None:
        return None
    rows = row["rows_written"]
    return UpstreamTaskRun(
        int(row["task_run_id"]), TaskRunStatus(row["status"]), None if rows is None else int(rows)
    )


def last_consumption(
    conn: EngineReads, task_dependency_id: int | None, pipeline_dependency_id: int | None
) -> Consumption | None:
    row = conn.one(
        "gate_last_consumption",
        task_dependency_id=task_dependency_id,
        pipeline_dependency_id=pipeline_dependency_id,
    )
    return None if row is None else Consumption(int(row["pipeline_run_id"]), int(row["revision"]))


def open_wait(conn: EngineReads, pipeline_run_id: int, task_id: int | None) -> OpenWait | None:
    """The unresolved wait of a run's task gate (task_id None: the pipeline gate)."""
    row = conn.one("gate_open_wait", pipeline_run_id=pipeline_run_id, task_id=task_id or 0)
    if row is None:
        return None
    return OpenWait(
        gate_wait_id=int(row["gate_wait_id"]),
        next_check_at=as_utc(row["next_check_at"]),
        wait_until=as_utc(row["wait_until"]),
        looks=int(row["looks"]),
    )


def start_wait(
    conn: EngineConnection,
    pipeline_run_id: int,
    task_id: int | None,
    *,
    next_in_seconds: float,
    wait_seconds: float,
    reason: str,
) -> None:
    conn.run(
        "gate_start_wait",
        pipeline_run_id=pipeline_run_id,
        task_id=task_id,
        next_in_seconds=next_in_seconds,
        wait_seconds=wait_seconds,
        reason=reason,
    )


def look_again(
    conn: EngineConnection, gate_wait_id: int, *, next_in_seconds: float, reason: str
) -> None:
    conn.run(
        "gate_look_again",
        gate_wait_id=gate_wait_id,
        next_in_seconds=next_in_seconds,
        reason=reason,
    )


def record_decision(
    conn: EngineConnection, pipeline_run_id: int, decision: Decision, actor: Actor
) -> None:
    """Record the decision, and resolve the wait it ends."""
    conn.run(
        "gate_record_decision",
        pipeline_run_id=pipeline_run_id,
        task_id=decision.task_id,
        pipeline_dependency_id=decision.pipeline_dependency_id,
        task_dependency_id=decision.task_dependency_id,
        selected_run_id=decision.selected_run_id,
        selected_task_run_id=decision.selected_task_run_id,
        selected_revision=decision.selected_revision,
        result=decision.result,
        reason=decision.reason,
        actor=actor.name,
        actor_kind=actor.kind.value,
    )
    conn.run(
        "gate_resolve_wait",
        pipeline_run_id=pipeline_run_id,
        task_id=decision.task_id or 0,
        reason=decision.reason,
    )


def consume_decisions(conn: EngineConnection, pipeline_run_id: int) -> None:
    """Record, for a finished run, the upstream runs its gates' decisions consumed: what
    admitted its tasks, never judged again."""
    conn.run("gate_consume_decisions", pipeline_run_id=pipeline_run_id)
