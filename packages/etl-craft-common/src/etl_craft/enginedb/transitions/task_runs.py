"""Task runs: created when a task is first queued or skipped; marked by operators.

Their status otherwise follows their latest attempt, written by the attempt transitions.
"""

from __future__ import annotations

from etl_craft.core.actor import Actor
from etl_craft.core.enums import TaskRunStatus
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.transitions._apply import apply, notify
from etl_craft.enginedb.transitions.table import Entity


def create_task_run(conn: EngineConnection, run_id: int, task_id: int, actor: Actor) -> int:
    return _insert(conn, "transition_create_task_run", run_id, task_id, actor, message=None)


def skip_task_run(
    conn: EngineConnection, run_id: int, task_id: int, actor: Actor, *, message: str
) -> int:
    return _insert(conn, "transition_skip_new_task_run", run_id, task_id, actor, message=message)


def mark_task_run(
    conn: EngineConnection,
    task_run_id: int,
    actor: Actor,
    *,
    status: TaskRunStatus,
    message: str,
    rows_written: int | None = None,
) -> None:
    if status not in (TaskRunStatus.SUCCESS, TaskRunStatus.FAILED, TaskRunStatus.SKIPPED):
        raise ValueError(f"mark_task_run takes SUCCESS, FAILED or SKIPPED, not {status.value}")
    apply(
        conn,
        Entity.TASK_RUN,
        "mark_task_run",
        task_run_id,
        actor,
        status=status.value,
        message=message,
        rows_written=rows_written,
    )


def reword_skipped_task_run(
    conn: EngineConnection, task_run_id: int, actor: Actor, *, message: str
) -> None:
    apply(conn, Entity.TASK_RUN, "reword_skipped_task_run", task_run_id, actor, message=message)


def _insert(
    conn: EngineConnection,
    statement: str,
    run_id: int,
    task_id: int,
    actor: Actor,
    *,
    message: str | None,
) -> int:
    params: dict[str, object] = {
        "pipeline_run_id": run_id,
        "task_id": task_id,
        "actor": actor.name,
        "actor_kind": actor.kind.value,
    }
    if message is not None:
        params["message"] = message
    row = conn.one(statement, **params)
    if row is None:
        existing = conn.one("task_run_by_task", pipeline_run_id=run_id, task_id=task_id)
        found = f"task run {existing['task_run_id']} ({existing['status']})" if existing else "one"
        raise StaleTransitionError(
            f"task {task_id} of run {run_id} already has {found}; another process started or "
            "skipped it first: act on that task run instead"
        )
    task_run_id = int(row["task_run_id"])
    notify(conn, Entity.TASK_RUN, task_run_id, str(row["status"]))
    return task_run_id
