"""Reads for the overviews people watch: a project's health, its interventions, the workers.

Each is one named statement of sql/overview.sql, on either dialect; the caller owns the read.
"""

from __future__ import annotations

from datetime import datetime

from etl_craft.core.errors import NotFoundError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, Row


def engine_now(conn: EngineConnection) -> datetime:
    """The Engine DB's clock, against which ages are measured."""
    now = as_utc(conn.scalar("metrics_clock"))
    assert now is not None
    return now


def project_runs(conn: EngineConnection, project_id: int, since: datetime) -> Row:
    """Counts of the project's live runs and of those ended since ``since``."""
    row = conn.one("overview_project_runs", project_id=project_id, since=since)
    assert row is not None  # an aggregate answers one row
    return row


def project_attempts(conn: EngineConnection, project_id: int) -> Row:
    row = conn.one("overview_project_attempts", project_id=project_id)
    assert row is not None
    return row


def pool_load(conn: EngineConnection) -> list[Row]:
    """Live attempts by pool, slot kind and status (every pool appears), as metrics reads them."""
    return conn.all("metrics_attempts")


def workers(conn: EngineConnection, limit: int) -> list[Row]:
    return conn.all("overview_workers", limit=limit)


def interventions(
    conn: EngineConnection, project_id: int, pipeline_id: int | None, limit: int
) -> list[Row]:
    return conn.all(
        "overview_interventions", project_id=project_id, pipeline_id=pipeline_id, limit=limit
    )


def project_id_of(conn: EngineConnection, project_code: str) -> int:
    row = conn.one("metadata_project", project_code=project_code)
    if row is None:
        raise NotFoundError(
            f"project {project_code!r} is not in the Engine DB; expected the project of "
            "craft-connector.yml (Orchestration.project): run etl-craft init-db"
        )
    return int(row["project_id"])


def fresh_leader(conn: EngineConnection, fresh_seconds: float) -> Row | None:
    """The leading overseer, if it runs: not stopped and beating within ``fresh_seconds``."""
    return conn.one("overview_leader", fresh_seconds=fresh_seconds)


def last_overseer_beat(conn: EngineConnection) -> datetime | None:
    return as_utc(conn.scalar("overview_last_overseer_beat"))


def waiting_pools(conn: EngineConnection, fresh_seconds: float) -> list[Row]:
    """Pools with due queued attempts, with their workers: ever, live, last heartbeat."""
    return conn.all("overview_waiting_pools", fresh_seconds=fresh_seconds)
