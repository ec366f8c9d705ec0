"""How much more work a run's project may queue: its MAX_RUNNING_TASKS and its warehouse's."""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.enginedb.connection import EngineConnection


@dataclass(frozen=True)
class ProjectLoad:
    max_running_tasks: int | None
    live: int  # attempts queued, claimed or running in the project's runs
    live_warehouse: int  # of them, those that hold a warehouse slot

    def room(self) -> int | None:
        """Attempts the project may still queue; None when it sets no limit."""
        if self.max_running_tasks is None:
            return None
        return max(0, self.max_running_tasks - self.live)


def project_load(conn: EngineConnection, run_id: int) -> ProjectLoad:
    row = conn.one("project_load", pipeline_run_id=run_id)
    if row is None:
        return ProjectLoad(None, 0, 0)
    limit = row["max_running_tasks"]
    return ProjectLoad(
        None if limit is None else int(limit), int(row["live"]), int(row["live_warehouse"])
    )
