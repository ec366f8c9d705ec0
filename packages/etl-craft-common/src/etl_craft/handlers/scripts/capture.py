"""Route a script's print() and stderr writes into the attempt log, secrets masked.

Its log records need nothing here: the task process's logging already writes each record to
the attempt log, once, with the attempt's context (runtime/context_logging).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from typing import TextIO

from etl_craft.core.redaction import Redactor


class RedactingWriter:
    """A text stream that masks each write before passing it on."""

    def __init__(self, target: TextIO, redactor: Redactor) -> None:
        self._target = target
        self._redactor = redactor

    def write(self, text: str) -> int:
        self._target.write(self._redactor(text))
        return len(text)

    def flush(self) -> None:
        self._target.flush()


@contextmanager
def captured(log: TextIO, redactor: Redactor) -> Iterator[None]:
    """While the block runs, print() and writes to sys.stdout or sys.stderr go to ``log``."""
    writer = RedactingWriter(log, redactor)
    try:
        with redirect_stdout(writer), redirect_stderr(writer):
            yield
    finally:
        writer.flush()
