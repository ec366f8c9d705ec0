"""How much more work a project may queue under its MAX_RUNNING_TASKS."""

from __future__ import annotations

from etl_craft.enginedb.connection import EngineConnection


def project_headroom(conn: EngineConnection, run_id: int) -> int | None:
    """Attempts the run's project may still queue; None when the project sets no limit."""
    row = conn.one("project_headroom", pipeline_run_id=run_id)
    if row is None or row["max_running_tasks"] is None:
        return None
    return max(0, int(row["max_running_tasks"]) - int(row["live"]))
