"""What a mark changes downstream: the engine's skips that judged the old outcome, judged again.

A task the engine skipped was skipped because of its upstreams' outcomes. When an operator
marks one of them, the skips it gated no longer hold on their own: each either can run now (its
next attempt is queued) or stays skipped for the reason the new outcome gives. Either way its
message says what changed. Skips further downstream wait for these tasks to end; the run's
supervisor judges them then.
"""

from __future__ import annotations

from etl_craft.core.actor import Actor
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.interventions import operator_decisions
from etl_craft.enginedb.runs import RunRow, read_pipeline_shape, read_task_runs
from etl_craft.enginedb.transitions import queue_attempt, reword_skipped_task_run
from etl_craft.scheduling.plan import (
    engine_skipped,
    runnable_again,
    still_skipped,
    task_run_state,
)
from etl_craft.scheduling.shape import build_shape


def rejudge_gated(
    conn: EngineConnection, actor: Actor, run: RunRow, task_id: int, change: str
) -> list[str]:
    """Judge again the engine's skips of the tasks that depend on ``task_id``, whose outcome
    ``change`` describes; the codes of those that can run now."""
    shape = build_shape(read_pipeline_shape(conn, run.pipeline_id), 0)
    rows = read_task_runs(conn, run.pipeline_run_id)
    states = {t: task_run_state(row) for t, row in rows.items()}
    skipped = engine_skipped(states, operator_decisions(conn, run.pipeline_run_id))
    gated = frozenset(
        t
        for t in skipped
        if any(edge.depends_on_task_id == task_id for edge in shape.graph.dependencies_of(t))
    )
    again = runnable_again(shape.graph, states, shape.policies, gated)
    for item in again:
        settings = shape.tasks[item.task.task_id]
        queue_attempt(
            conn,
            item.task_run_id,
            actor,
            slot_kind=settings.slot_kind,
            pool=settings.pool or run.default_pool,
            priority=run.priority,
            message=f"runnable again: {change}",
        )
    for held in still_skipped(shape.graph, states, shape.policies, gated):
        row = rows[held.task.task_id]
        if row.message != held.reason:
            reword_skipped_task_run(
                conn, row.task_run_id, actor, message=f"{held.reason}; judged again after {change}"
            )
    return [item.task.code for item in again]
