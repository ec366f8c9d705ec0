"""A warehouse error in a task's SELECT, pointed at the line of the user's own SQL.

DuckDB and PostgreSQL number lines in the statement they were sent, which wraps the task's
SELECT in the action's own SQL, so their "LINE 3:" is off from the user's file. The text they
quote after it is the user's, so it is found in the SELECT as the user wrote it.
"""

from __future__ import annotations

import re

from etl_craft.core.errors import WarehouseError

_QUOTED_LINE = re.compile(r"^LINE \d+:\s?(?P<text>.*)$", re.MULTILINE)


def source_line(message: str, source: str) -> int | None:
    """The line of ``source`` that the driver's ``message`` quotes, when it quotes one that is
    found there once."""
    quoted = _QUOTED_LINE.search(message)
    if quoted is None or not quoted["text"].strip():
        return None
    wanted = quoted["text"].strip()
    lines = [number for number, line in enumerate(source.splitlines(), 1) if wanted in line]
    return lines[0] if len(lines) == 1 else None


def located(error: WarehouseError, source: str, where: str) -> WarehouseError:
    """``error`` restated at its line of ``where`` (SOURCE_SQL or a SOURCE_SQL_FILE)."""
    message = str(error)
    line = source_line(message, source)
    if line is None:
        return error
    said = _QUOTED_LINE.split(message)[0].strip().replace("\n", " ")
    return WarehouseError(
        f"{where} line {line}: {said}; fix that line and rerun the task "
        f"(the warehouse's own line number counts the action's wrapping SQL too)"
    )
