"""A task process's standard output and error, masked before they reach the attempt log.

The owner points the child's descriptors 1 and 2 at the log file, so whatever writes to them
(print, a C library, a program a script starts) bypasses Python's logging. Once the child knows
its secrets, it points both descriptors at a pipe instead; a thread copies the pipe to the log
line by line, each line masked. The file then never holds a secret, so no read of it, at any
offset, can show part of one.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from etl_craft.core.redaction import Redactor

READ_SIZE = 64 * 1024
# A line longer than this is written in pieces, each cut where no secret spans the cut.
LONGEST_LINE = 256 * 1024
# How long the child waits, when it ends, for a program it started that still holds the pipe.
DRAIN_SECONDS = 5.0


class LineMasker:
    """Masks a byte stream whole lines at a time, so a secret split between two reads of the
    pipe is still found."""

    def __init__(self, redactor: Redactor, write: Callable[[bytes], None]) -> None:
        self._redactor = redactor
        self._write = write
        self._pending = b""

    def feed(self, data: bytes) -> None:
        self._pending += data
        end = self._pending.rfind(b"\n") + 1
        if end == 0 and len(self._pending) > LONGEST_LINE:
            end = self._redactor.safe_cut(self._pending)
        if end > 0:
            ready, self._pending = self._pending[:end], self._pending[end:]
            self._emit(ready)

    def close(self) -> None:
        if self._pending:
            self._emit(self._pending)
            self._pending = b""

    def _emit(self, data: bytes) -> None:
        text = data.decode("utf-8", errors="surrogateescape")
        self._write(self._redactor(text).encode("utf-8", errors="surrogateescape"))


class MaskedOutput:
    """Descriptors 1 and 2 of this process, through a masking thread to where they pointed."""

    def __init__(self, redactor: Redactor) -> None:
        self._log = os.dup(1)
        reading, writing = os.pipe()
        self._reading = reading
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.dup2(writing, 1)
        os.dup2(writing, 2)
        os.close(writing)
        self._masker = LineMasker(redactor, self._write_log)
        self._thread = threading.Thread(target=self._copy, name="masked-output", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Flush what was written, and give the log back its descriptors."""
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.dup2(self._log, 1)
        os.dup2(self._log, 2)
        self._thread.join(DRAIN_SECONDS)

    def _copy(self) -> None:
        try:
            while data := os.read(self._reading, READ_SIZE):
                self._masker.feed(data)
            self._masker.close()
        finally:
            os.close(self._reading)

    def _write_log(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._log, view) :]


@contextmanager
def masked_output(redactor: Redactor) -> Iterator[None]:
    if not redactor:
        yield  # nothing to mask: the descriptors stay on the log file
        return
    output = MaskedOutput(redactor)
    try:
        yield
    finally:
        output.close()
