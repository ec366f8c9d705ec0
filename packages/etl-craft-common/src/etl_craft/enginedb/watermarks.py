"""The AUD_ tables etl-craft clone mirrors, each with its UPDATED_AT watermark and its key.

Every row of these tables carries UPDATED_AT, the time of its last write, stamped by triggers
the migration runner attaches (enginedb/sql/<dialect>/guards.sql). A clone copies the rows
whose (UPDATED_AT, key) follow its watermark. The history of the others (workers, sessions,
offsets, flags) is state of the running system rather than history, and stays out.
"""

from __future__ import annotations

from dataclasses import dataclass

WATERMARK = "UPDATED_AT"


@dataclass(frozen=True)
class MirroredTable:
    name: str
    key: str  # its primary key, one BIGINT column: the watermark's tie-breaker
    changes: bool  # whether a row is updated after it is inserted (else: append-only)


MIRRORED_TABLES = (
    MirroredTable("AUD_PIPELINES_RUN_LOG", "PIPELINE_RUN_ID", changes=True),
    MirroredTable("AUD_TASK_RUN_LOG", "TASK_RUN_ID", changes=True),
    MirroredTable("AUD_TASK_ATTEMPTS", "ATTEMPT_ID", changes=True),
    MirroredTable("AUD_GATE_DECISIONS", "DECISION_ID", changes=False),
    MirroredTable("AUD_GATE_WAITS", "GATE_WAIT_ID", changes=True),
    MirroredTable("AUD_DEPENDENCY_CONSUMPTION", "CONSUMPTION_ID", changes=False),
    MirroredTable("AUD_RUN_INTERVENTIONS", "INTERVENTION_ID", changes=False),
    MirroredTable("AUD_PIPELINE_PAUSES", "PAUSE_ID", changes=True),
    MirroredTable("AUD_ACTIONS", "ACTION_ID", changes=False),
    MirroredTable("AUD_METADATA_CHANGES", "CHANGE_ID", changes=False),
    MirroredTable("AUD_DOWNSTREAM_RERUNS", "RERUN_ID", changes=True),
)
MIRRORED = {table.name: table for table in MIRRORED_TABLES}
