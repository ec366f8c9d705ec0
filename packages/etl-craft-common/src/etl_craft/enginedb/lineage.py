"""AUD_LINEAGE_TRACES: each SQL task's traced SELECT, kept by the hashes of what it depends on."""

from __future__ import annotations

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


def record_trace(conn: EngineConnection, stored: StoredTrace, actor: Actor) -> None:
    conn.run(
        "record_lineage_trace",
        task_id=stored.task_id,
        sql_hash=stored.sql_hash,
        input_hash=stored.input_hash,
        trace=stored.trace,
        actor=actor.name,
    )
