"""What an ingestion script receives and returns, and the checks its result passes before storing.

etl_craft.scripting re-exports these names as the public scripting API.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, SupportsIndex

from etl_craft.config.sections import Warehouse
from etl_craft.core.errors import ConfigurationError, ScriptError
from etl_craft.enginedb.offsets import Offset, OffsetType, OffsetValue
from etl_craft.warehouse import WarehouseConnection, connect
from etl_craft.warehouse.fence import fenced_transaction


@dataclass(frozen=True)
class ScriptResult:
    """What ``run(context)`` returns: rows it loaded, and where the next attempt resumes."""

    row_count: int
    # None keeps the stored offset as it is.
    offset: OffsetValue | None = None


@dataclass(frozen=True)
class ScriptContext:
    """Everything a script is given: read it, never write the Engine DB from a script."""

    offset: OffsetValue | None  # the stored offset, None on the first run
    offset_type: OffsetType | None
    input_params: dict[str, Any]
    run_date: date
    pipeline_id: int
    pipeline_run_id: int
    task_id: int
    task_run_id: int
    attempt_id: int
    log: logging.Logger
    warehouse_settings: Warehouse | None = field(default=None, repr=False)

    def warehouse(self) -> WarehouseConnection:
        """A new connection to the project's warehouse (UTC session); close it, or use ``with``."""
        return connect(self._settings())

    @contextmanager
    def fenced_transaction(self) -> Iterator[WarehouseConnection]:
        """A new warehouse connection in one transaction fenced for this attempt.

        It first takes this task run's fence row, so what the block writes commits only while
        no later attempt of the task run has published; an older attempt's block is refused
        (StaleTransitionError) before it writes, and overlapping attempts wait for each other.
        Commits when the block ends, rolls back when it raises, then closes the connection.
        """
        settings = self._settings()
        with (
            connect(settings) as conn,
            fenced_transaction(conn, self.task_run_id, self.attempt_id, settings.ledger_schema),
        ):
            yield conn

    def _settings(self) -> Warehouse:
        if self.warehouse_settings is None:
            raise ConfigurationError(
                f"task {self.task_id} asked for a warehouse connection, but none is configured; "
                "add a Warehouse section to craft-connector.yml"
            )
        return self.warehouse_settings


@dataclass(frozen=True)
class CheckedResult:
    row_count: int
    offset: Offset | None


def check_result(result: object, offset_type: OffsetType | None, script: str) -> CheckedResult:
    """Every check on the whole result, so nothing is stored from a result that fails one."""
    if not isinstance(result, ScriptResult):
        raise ScriptError(
            f"script {script} returned {type(result).__name__} ({result!r:.100}); expected "
            "ScriptResult(row_count, offset) from etl_craft.scripting: return one from run()"
        )
    row_count = result.row_count
    if isinstance(row_count, bool) or not isinstance(row_count, int) or row_count < 0:
        raise ScriptError(
            f"script {script} returned row_count {row_count!r}; expected a whole number >= 0 "
            "of rows it loaded"
        )
    if result.offset is None:
        return CheckedResult(row_count, None)
    if offset_type is None:
        raise ScriptError(
            f"script {script} returned the offset {result.offset!r}, but the task has no "
            "OFFSET_TYPE; set OFFSET_TYPE (INT, TEXT or TIMESTAMP) on the task, or return "
            "offset=None"
        )
    return CheckedResult(row_count, Offset(offset_type, cast_offset(result.offset, offset_type)))


def cast_offset(value: object, offset_type: OffsetType) -> OffsetValue:
    """``value`` as the OFFSET_TYPE's Python type, refused when it would change on the way."""
    if offset_type is OffsetType.INT:
        return _as_int(value)
    if offset_type is OffsetType.TEXT:
        if not isinstance(value, str):
            raise _wrong_type(value, offset_type, "a str")
        return value
    return _as_timestamp(value)


def _as_int(value: object) -> int:
    # __index__ admits numpy integers too, but never a float that would lose digits.
    if isinstance(value, bool) or not isinstance(value, SupportsIndex):
        raise _wrong_type(value, OffsetType.INT, "an int")
    return operator.index(value)


def _as_timestamp(value: object) -> datetime:
    if not isinstance(value, datetime):
        raise _wrong_type(value, OffsetType.TIMESTAMP, "a timezone-aware datetime")
    # pandas.Timestamp is a datetime that carries nanoseconds the offset store can't keep.
    if getattr(value, "nanosecond", 0):
        raise ScriptError(
            f"offset {value} has nanoseconds, which the offset store can't keep; round it to "
            "microseconds (for a pandas Timestamp: .floor('us'))"
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise ScriptError(
            f"offset {value.isoformat()} has no time zone; expected an aware datetime: attach "
            "one, for example value.replace(tzinfo=datetime.UTC) for a UTC value"
        )
    return datetime(
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
        tzinfo=value.tzinfo,
    )


def _wrong_type(value: object, offset_type: OffsetType, expected: str) -> ScriptError:
    return ScriptError(
        f"offset {value!r} is a {type(value).__name__}; OFFSET_TYPE {offset_type} expects "
        f"{expected}: convert it in the script or change the task's OFFSET_TYPE"
    )
