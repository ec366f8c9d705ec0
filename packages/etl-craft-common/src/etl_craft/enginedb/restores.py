"""What etl-craft restore reads from the Engine DB: a run's task runs, and writers running now."""

from __future__ import annotations

from etl_craft.enginedb.connection import EngineConnection


def run_exists(conn: EngineConnection, pipeline_run_id: int) -> bool:
    return bool(conn.scalar("run_exists", pipeline_run_id=pipeline_run_id))


def task_runs_of_run(conn: EngineConnection, pipeline_run_id: int) -> frozenset[int]:
    rows = conn.all("task_runs_of_run", pipeline_run_id=pipeline_run_id)
    return frozenset(int(row["task_run_id"]) for row in rows)


def running_writers_of(conn: EngineConnection, target: str) -> list[tuple[int, str]]:
    rows = conn.all("running_writers_of", target=target.lower())
    return [(int(row["task_run_id"]), str(row["task_code"])) for row in rows]
