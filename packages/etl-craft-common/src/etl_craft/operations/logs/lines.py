"""Reading an attempt's log: whole lines from a byte offset on, secrets masked.

The CLI's `logs` and the API's log endpoint both read through here. A reader may start or stop
at any offset, so masking works on whole lines: a secret is never split between two reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from etl_craft.core.redaction import Redactor
from etl_craft.operations.context import OperationContext
from etl_craft.operations.logs.attempts import AttemptView, attempt, attempt_log
from etl_craft.operations.logs.sources import LogSource

CHUNK = 64 * 1024
FOLLOW_POLL_SECONDS = 0.2


@dataclass(frozen=True)
class AttemptLogView:
    schema: ClassVar[str] = "etl-craft/attempt-log/1"
    attempt: AttemptView
    path: str  # the file, or the stored log's location
    lines: list[str]


@dataclass(frozen=True)
class LogRead:
    text: str
    next_offset: int  # where the next read starts: after the last whole line returned


def masked_chunks(source: LogSource, start: int, end: int, redactor: Redactor) -> Iterator[bytes]:
    """The bytes from ``start`` to ``end``, whole lines at a time so a secret is masked whole."""
    position, carried = start, b""
    while position < end:
        chunk = source.read(position, min(position + CHUNK, end))
        if not chunk:
            break
        position += len(chunk)
        lines, _, carried = (carried + chunk).rpartition(b"\n")
        if lines:
            yield _masked(lines + b"\n", redactor)
    if carried:
        yield _masked(carried, redactor)


def read_lines(source: LogSource, start: int, redactor: Redactor, *, partial: bool) -> LogRead:
    """What was written from ``start`` to the current end; a last line without its newline
    only when ``partial`` (the writer has finished), else it is left for the next read."""
    end = source.size()
    if end <= start:
        return LogRead("", start)
    data = source.read(start, end)
    if not partial:
        data = data[: data.rfind(b"\n") + 1]
    return LogRead(_masked(data, redactor).decode("utf-8"), start + len(data))


def whole_log(ctx: OperationContext, attempt_id: int, redactor: Redactor) -> AttemptLogView:
    source = attempt_log(ctx, attempt_id)
    text = read_lines(source, 0, redactor, partial=True).text
    return AttemptLogView(attempt(ctx, attempt_id), source.where, text.splitlines())


def follow_log(
    ctx: OperationContext,
    attempt_id: int,
    redactor: Redactor,
    write: Callable[[str], None],
    *,
    poll_seconds: float = FOLLOW_POLL_SECONDS,
) -> AttemptView:
    """Pass each line to ``write`` as it is written, until the attempt ends; its final view.

    An attempt that has not started yet is waited for: its log exists once it runs.
    """
    source = _started_log(ctx, attempt_id, poll_seconds)
    offset = 0
    while True:
        # Read the status first: every line written before the attempt ended is then read below.
        view = attempt(ctx, attempt_id)
        ended = view.status.terminal
        if ended:
            # Its owner may have moved it to the Logs store: the same bytes, found there.
            source = attempt_log(ctx, attempt_id)
        read = read_lines(source, offset, redactor, partial=ended)
        if read.text:
            write(read.text)
        offset = read.next_offset
        if ended:
            return view
        time.sleep(poll_seconds)


def _started_log(ctx: OperationContext, attempt_id: int, poll_seconds: float) -> LogSource:
    while True:
        view = attempt(ctx, attempt_id)
        if view.has_log or view.status.terminal:
            return attempt_log(ctx, attempt_id)
        time.sleep(poll_seconds)


def _masked(data: bytes, redactor: Redactor) -> bytes:
    return redactor(data.decode("utf-8", errors="replace")).encode("utf-8")
