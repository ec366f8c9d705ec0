"""AUD_LINEAGE_TRACES: each SQL task's traced SELECT, kept by the hashes of what it depends on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from etl_craft.core.actor import Actor
from etl_craft.enginedb.connection import EngineConnection


@dataclass(frozen=True)
class StoredTrace:
    task_id: int
    sql_hash: str  # the SELECT after tokens, its dialect and the sqlglot version
    input_hash: str  # sql_hash and the known columns of the tables it reads
    trace: str  # JSON, as etl_craft.lineage.Trace writes it


def stored_traces(conn: EngineConnection, project_id: int) -> dict[int, StoredTrace]:
    return {
        int(row["task_id"]): StoredTrace(
            int(row["task_id"]), row["sql_hash"], row["input_hash"], row["trace"]
        )
        for row in conn.all("lineage_traces", project_id=project_id)
    }


def record_traces(conn: EngineConnection, traces: Sequence[StoredTrace], actor: Actor) -> None:
    """Record every trace in one batch: a first build stores as many as there are SQL tasks."""
    conn.run_many(
        "record_lineage_trace",
        [
            {
                "task_id": t.task_id,
                "sql_hash": t.sql_hash,
                "input_hash": t.input_hash,
                "trace": t.trace,
                "actor": actor.name,
            }
            for t in traces
        ],
    )
