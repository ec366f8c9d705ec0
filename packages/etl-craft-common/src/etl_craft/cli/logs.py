"""Logging set-up for --log-level and --log-format."""

from __future__ import annotations

import json
import logging
import sys
from typing import ClassVar

CONTEXT_FIELDS = ("pipeline", "task", "pipeline_run_id", "task_run_id", "attempt")


class JsonFormatter(logging.Formatter):
    """One JSON object per record, carrying the attempt context when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, object] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in CONTEXT_FIELDS:
            if hasattr(record, name):
                document[name] = getattr(record, name)
        if record.exc_info:
            document["traceback"] = self.formatException(record.exc_info)
        return json.dumps(document, default=str)


class TextFormatter(logging.Formatter):
    default_format: ClassVar[str] = "%(asctime)s %(levelname)s %(name)s: %(message)s"

    def __init__(self) -> None:
        super().__init__(self.default_format)


def configure_logging(level: str, fmt: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
