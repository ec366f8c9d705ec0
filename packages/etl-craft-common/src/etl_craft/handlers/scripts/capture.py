"""Route a script's stdout, stderr and logging into the attempt log, secrets masked."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from typing import TextIO

from etl_craft.core.redaction import RedactingFilter, Redactor

# Client libraries log request URLs at INFO/DEBUG, and URLs often carry keys or signed tokens.
CHATTY_LOGGERS = (
    "urllib3",
    "requests",
    "httpx",
    "httpcore",
    "botocore",
    "boto3",
    "s3transfer",
    "azure",
    "google",
    "snowflake.connector",
    "databricks",
)
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


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
def captured(log: TextIO, redactor: Redactor, *, debug: bool) -> Iterator[None]:
    """While the block runs, print() and every logger write (masked) to ``log``."""
    writer = RedactingWriter(log, redactor)
    handler = logging.StreamHandler(writer)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(RedactingFilter(redactor))
    root = logging.getLogger()
    saved_root = root.level
    saved_chatty = {name: logging.getLogger(name).level for name in CHATTY_LOGGERS}
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if debug else logging.WARNING)
    try:
        with redirect_stdout(writer), redirect_stderr(writer):
            yield
    finally:
        root.removeHandler(handler)
        root.setLevel(saved_root)
        for name, level in saved_chatty.items():
            logging.getLogger(name).setLevel(level)
        writer.flush()
