"""AUD_TASK_OFFSETS: where an ingestion task resumes, stored only with its attempt's SUCCESS."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from etl_craft.core.actor import Actor
from etl_craft.core.enums import AttemptStatus
from etl_craft.core.errors import EngineDBError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.transitions.attempts import AttemptOutcome, finish_attempt


class OffsetType(StrEnum):
    INT = "INT"
    TEXT = "TEXT"
    TIMESTAMP = "TIMESTAMP"


OffsetValue = int | str | datetime
_PYTHON_TYPES: dict[OffsetType, type] = {
    OffsetType.INT: int,
    OffsetType.TEXT: str,
    OffsetType.TIMESTAMP: datetime,
}


@dataclass(frozen=True)
class Offset:
    """A checked offset: ints are ints, texts are str, timestamps are aware, whole microseconds."""

    type: OffsetType
    value: OffsetValue

    def __post_init__(self) -> None:
        expected = _PYTHON_TYPES[self.type]
        aware = not isinstance(self.value, datetime) or self.value.utcoffset() is not None
        if type(self.value) is not expected or not aware:
            raise ValueError(
                f"offset {self.value!r} is a {type(self.value).__name__}; OFFSET_TYPE "
                f"{self.type} holds a {expected.__name__} (timestamps with a time zone)"
            )

    def encode(self) -> str:
        if isinstance(self.value, datetime):
            return self.value.astimezone(UTC).isoformat(timespec="microseconds")
        return str(self.value)

    @classmethod
    def decode(cls, offset_type: str, text: str) -> Offset:
        kind = OffsetType(offset_type)
        if kind is OffsetType.INT:
            return cls(kind, int(text))
        if kind is OffsetType.TIMESTAMP:
            return cls(kind, datetime.fromisoformat(text).astimezone(UTC))
        return cls(kind, text)


def read_offset(conn: EngineConnection, task_id: int) -> Offset | None:
    row = conn.one("read_task_offset", task_id=task_id)
    if row is None:
        return None
    return stored_offset(task_id, str(row["offset_type"]), str(row["offset_value"]))


def stored_offset(task_id: int, offset_type: str | None, text: str | None) -> Offset | None:
    """The offset of ``task_id`` from its AUD_TASK_OFFSETS columns (None: nothing stored)."""
    if offset_type is None or text is None:
        return None
    try:
        return Offset.decode(offset_type, text)
    except ValueError as error:
        raise EngineDBError(
            f"the stored offset of task {task_id} is {text!r}, which is not a valid "
            f"{offset_type} ({error}); it was written outside etl-craft: correct or delete the "
            "AUD_TASK_OFFSETS row"
        ) from error


def store_offset(conn: EngineConnection, task_id: int, attempt_id: int, offset: Offset) -> None:
    """Store ``offset`` in the caller's transaction, the one that records the attempt's SUCCESS."""
    conn.run(
        "store_task_offset",
        task_id=task_id,
        offset_type=offset.type.value,
        offset_value=offset.encode(),
        attempt_id=attempt_id,
    )


def finish_with_offset(
    conn: EngineConnection,
    attempt_id: int,
    actor: Actor,
    *,
    owner_id: str,
    outcome: AttemptOutcome,
    task_id: int,
    offset: Offset | None,
) -> None:
    """Record the outcome; store the offset if and only if it is SUCCESS, in the same transaction.

    A refused transition raises before the offset is written, and the caller's rollback
    undoes both, so the offset never moves past an attempt that is not recorded SUCCESS.
    """
    finish_attempt(conn, attempt_id, actor, owner_id=owner_id, outcome=outcome)
    if offset is not None and outcome.status is AttemptStatus.SUCCESS:
        store_offset(conn, task_id, attempt_id, offset)
