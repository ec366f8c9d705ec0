"""Retention: what a purge finds and deletes, one table at a time, oldest rows first.

A purge removes runs past their retention with everything that hangs off them, children before
parents (consumption, interventions, gate decisions and waits, downstream reruns, attempts,
task runs, runs), in batches of at most ``batch`` rows per transaction. Every delete names the
rows it found, so a batch deletes no row it did not count. The history guards let a purge's
transaction delete recorded history only after it marked itself with its AUD_ACTIONS row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from etl_craft.enginedb.connection import EngineConnection

# An instant before any row: the cutoff that keeps what is kept for ever, and the start of the
# walk through expired runs.
BEFORE_ALL = datetime(1900, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Cutoffs:
    runs: datetime  # runs that ended before this go (with their attempts and task runs)
    consumption: datetime  # consumption records written before this go
    interventions: datetime  # interventions before this no longer hold their run back
    project_id: int | None  # None: every project

    def scope(self) -> dict[str, Any]:
        return {"project_id": self.project_id}


@dataclass(frozen=True)
class PurgedTable:
    table: str
    stem: str  # its statements: purge_<stem>_ids and purge_<stem>


CONSUMPTION = PurgedTable("AUD_DEPENDENCY_CONSUMPTION", "consumption")
# What hangs off a run, each table before the tables it references.
RUN_TABLES = (
    CONSUMPTION,
    PurgedTable("AUD_RUN_INTERVENTIONS", "interventions"),
    PurgedTable("AUD_GATE_DECISIONS", "gate_decisions"),
    PurgedTable("AUD_GATE_WAITS", "gate_waits"),
    PurgedTable("AUD_DOWNSTREAM_RERUNS", "downstream_reruns"),
    PurgedTable("AUD_TASK_ATTEMPTS", "attempts"),
    PurgedTable("AUD_TASK_RUN_LOG", "task_runs"),
    PurgedTable("AUD_PIPELINES_RUN_LOG", "runs"),
)


@dataclass(frozen=True)
class RunCursor:
    """Where the walk through expired runs (ordered by end, then id) has got to."""

    ended: datetime | str = BEFORE_ALL  # as the Engine DB returns it (SQLite: text)
    run_id: int = 0


def expired_runs(
    conn: EngineConnection, cutoffs: Cutoffs, after: RunCursor, batch: int
) -> list[tuple[int, datetime | str]]:
    """Up to ``batch`` runs past their retention after ``after``, oldest first, with their end."""
    rows = conn.all(
        "purge_expired_runs",
        run_cutoff=cutoffs.runs,
        intervention_cutoff=cutoffs.interventions,
        after_end=after.ended,
        after_id=after.run_id,
        batch=batch,
        **cutoffs.scope(),
    )
    return [(int(row["id"]), row["ended"]) for row in rows]


def lock_runs(conn: EngineConnection, run_ids: Sequence[int]) -> list[int]:
    """Those of ``run_ids`` still ended, locked until this transaction ends (none is reopened
    while its history goes)."""
    return [int(row["id"]) for row in conn.all("lock_purged_runs", run_id_list=list(run_ids))]


def expired_consumption(conn: EngineConnection, cutoffs: Cutoffs, batch: int) -> list[int]:
    rows = conn.all(
        "purge_expired_consumption_ids",
        consumption_cutoff=cutoffs.consumption,
        batch=batch,
        **cutoffs.scope(),
    )
    return [int(row["id"]) for row in rows]


def dependent_ids(
    conn: EngineConnection, table: PurgedTable, run_ids: Sequence[int], batch: int
) -> list[tuple[int, int]]:
    """Up to ``batch`` rows of ``table`` that hang off ``run_ids``: (row id, run id) each."""
    rows = conn.all(f"purge_{table.stem}_ids", run_id_list=list(run_ids), batch=batch)
    return [(int(row["id"]), int(row["run_id"])) for row in rows]


def delete_rows(
    conn: EngineConnection, table: PurgedTable, ids: Sequence[int]
) -> list[dict[str, Any]]:
    """Delete the rows ``ids`` of ``table`` and return them, columns named in lower case."""
    rows = conn.all(f"purge_{table.stem}", id_list=list(ids))
    return [{str(key).lower(): value for key, value in row.items()} for row in rows]


def table_types(conn: EngineConnection, table: str) -> list[tuple[str, str]]:
    """The columns of ``table`` in order, each with its declared type."""
    rows = conn.all("purge_archive_columns", table_name=table)
    return [(str(row["column_name"]), str(row["data_type"])) for row in rows]
