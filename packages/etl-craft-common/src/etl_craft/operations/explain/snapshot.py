"""The facts `explain` judges, read from the Engine DB in one read transaction."""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.core.enums import DependencyType, RunCondition, RunStatus, TaskRunStatus
from etl_craft.core.errors import NotFoundError
from etl_craft.enginedb.connection import EngineReads
from etl_craft.enginedb.controls import RunControls, read_controls
from etl_craft.enginedb.explain_reads import (
    AttemptRow,
    GateDecisionRow,
    GateWaitRow,
    InterventionRow,
    read_attempts,
    read_gate_decisions,
    read_gate_waits,
    read_interventions,
)
from etl_craft.enginedb.runs import (
    DependencyRow,
    PipelineShape,
    RunRow,
    TaskRow,
    TaskRunRow,
    read_pipeline_shape,
    read_run,
    read_task_runs,
)
from etl_craft.scheduling.plan import RetryPolicy, retry_due, task_run_state
from etl_craft.scheduling.shape import RunShape, build_shape


@dataclass(frozen=True)
class RunHeader:
    run_id: int
    pipeline_code: str
    run_key: str
    status: RunStatus
    paused: bool = False
    cancel_pending: bool = False


@dataclass(frozen=True)
class DependencySnapshot:
    task_dependency_id: int
    upstream_code: str
    upstream_pipeline: str
    type: DependencyType
    cross_pipeline: bool = False
    upstream_status: TaskRunStatus | None = None  # None: not run (or no gate has chosen one)
    upstream_rows: int | None = None
    upstream_retry_pending: bool = False  # FAILED with a retry to come: still running


@dataclass(frozen=True)
class ExplainSnapshot:
    run: RunHeader
    task_code: str
    run_condition: RunCondition
    required_count: int | None
    retry: RetryPolicy
    task_run: TaskRunRow | None
    attempts: tuple[AttemptRow, ...] = ()
    dependencies: tuple[DependencySnapshot, ...] = ()
    gate_waits: tuple[GateWaitRow, ...] = ()
    gate_decisions: tuple[GateDecisionRow, ...] = ()
    mark: InterventionRow | None = None  # the operator's mark that set the task run's status


@dataclass(frozen=True)
class ExplainRecords:
    """The rows a snapshot is judged from: as the Engine DB holds them now, or as they stood
    at a past moment (`explain --at` rebuilds them from the run's history)."""

    run: RunRow
    controls: RunControls
    task: TaskRow
    pipeline: PipelineShape
    shape: RunShape
    task_runs: dict[int, TaskRunRow]
    attempts: tuple[AttemptRow, ...]
    gate_waits: tuple[GateWaitRow, ...]
    gate_decisions: tuple[GateDecisionRow, ...]
    interventions: tuple[InterventionRow, ...]


def read_explain_records(
    conn: EngineReads, run_id: int, task_code: str, *, default_retries: int = 0
) -> ExplainRecords:
    run = read_run(conn, run_id)
    pipeline = read_pipeline_shape(conn, run.pipeline_id)
    task = _task(pipeline, run.pipeline_code, task_code)
    runs = read_task_runs(conn, run_id)
    row = runs.get(task.task_id)
    return ExplainRecords(
        run=run,
        controls=read_controls(conn, run_id),
        task=task,
        pipeline=pipeline,
        shape=build_shape(pipeline, default_retries),
        task_runs=runs,
        attempts=read_attempts(conn, row.task_run_id) if row else (),
        gate_waits=read_gate_waits(conn, run_id, task.task_id),
        gate_decisions=read_gate_decisions(conn, run_id, task.task_id),
        interventions=read_interventions(conn, run_id),
    )


def read_explain_snapshot(
    conn: EngineReads, run_id: int, task_code: str, *, default_retries: int = 0
) -> ExplainSnapshot:
    return snapshot_of(
        read_explain_records(conn, run_id, task_code, default_retries=default_retries)
    )


def snapshot_of(records: ExplainRecords) -> ExplainSnapshot:
    run, task, runs = records.run, records.task, records.task_runs
    decisions = records.gate_decisions
    return ExplainSnapshot(
        run=_header(run, records.controls),
        task_code=task.task_code,
        run_condition=task.run_condition,
        required_count=task.required_count,
        retry=records.shape.tasks[task.task_id].retry,
        task_run=runs.get(task.task_id),
        attempts=records.attempts,
        dependencies=tuple(
            _dependency(dep, run.pipeline_id, runs, records.shape.policies, decisions)
            for dep in records.pipeline.dependencies
            if dep.task_id == task.task_id
        ),
        gate_waits=records.gate_waits,
        gate_decisions=decisions,
        mark=standing_mark(records.interventions, runs.get(task.task_id), records.attempts),
    )


def standing_mark(
    interventions: tuple[InterventionRow, ...],
    row: TaskRunRow | None,
    attempts: tuple[AttemptRow, ...],
) -> InterventionRow | None:
    """The task run's latest mark, unless an attempt was queued after it (a rerun or a mark's
    rejudging): then that attempt, not the operator, set its status."""
    marks = [
        i for i in interventions if row and i.task_run_id == row.task_run_id and i.kind == "MARK"
    ]
    if not marks:
        return None
    latest = marks[-1]
    later = [a for a in attempts if a.queued_at is not None and a.queued_at > latest.requested_at]
    return None if later else latest


def _task(pipeline: PipelineShape, pipeline_code: str, task_code: str) -> TaskRow:
    task = next((t for t in pipeline.tasks if t.task_code == task_code), None)
    if task is None:
        codes = ", ".join(sorted(t.task_code for t in pipeline.tasks)) or "none"
        raise NotFoundError(
            f"pipeline {pipeline_code} has no active task {task_code!r}; its tasks are "
            f"{codes}: check --task"
        )
    return task


def _header(run: RunRow, controls: RunControls) -> RunHeader:
    return RunHeader(
        run.pipeline_run_id,
        run.pipeline_code,
        run.run_key,
        run.status,
        controls.paused,
        controls.cancel_pending,
    )


def _dependency(
    dep: DependencyRow,
    pipeline_id: int,
    runs: dict[int, TaskRunRow],
    policies: dict[int, RetryPolicy],
    decisions: tuple[GateDecisionRow, ...],
) -> DependencySnapshot:
    common = (dep.task_dependency_id, dep.upstream_task_code, dep.upstream_pipeline_code)
    if dep.upstream_pipeline_id != pipeline_id:
        chosen = [d for d in decisions if d.task_dependency_id == dep.task_dependency_id]
        latest = chosen[-1] if chosen else None
        return DependencySnapshot(
            *common,
            dep.dependency_type,
            cross_pipeline=True,
            upstream_status=latest.upstream_status if latest else None,
            upstream_rows=latest.upstream_rows if latest else None,
        )
    row = runs.get(dep.depends_on_task_id)
    policy = policies.get(dep.depends_on_task_id, RetryPolicy())
    retrying = row is not None and retry_due(task_run_state(row), policy) is not None
    return DependencySnapshot(
        *common,
        dep.dependency_type,
        upstream_status=row.status if row else None,
        upstream_rows=row.rows_written if row else None,
        upstream_retry_pending=retrying,
    )
