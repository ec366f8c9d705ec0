"""Log records of a task process carry the attempt they belong to."""

from __future__ import annotations

import logging
import sys

from etl_craft.enginedb.attempts import AttemptInvocation

CHATTY_LOGGERS = ("urllib3", "httpx", "httpcore", "botocore", "boto3", "s3transfer", "requests")


class AttemptContext(logging.Filter):
    """Stamps pipeline, task, run id, task run id and attempt number on every record."""

    def __init__(self, invocation: AttemptInvocation) -> None:
        super().__init__()
        self.fields = {
            "pipeline": invocation.pipeline_code,
            "task": invocation.task_code,
            "pipeline_run_id": invocation.pipeline_run_id,
            "task_run_id": invocation.task_run_id,
            "attempt": invocation.attempt_number,
        }

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in self.fields.items():
            setattr(record, name, value)
        return True


TEXT_FORMAT = (
    "%(asctime)s %(levelname)s [%(pipeline)s.%(task)s run=%(pipeline_run_id)s "
    "task_run=%(task_run_id)s attempt=%(attempt)s] %(name)s: %(message)s"
)


def configure_task_logging(invocation: AttemptInvocation, level: str) -> logging.Logger:
    """Route every record of the process to stderr (the attempt log) with its context."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    handler.addFilter(AttemptContext(invocation))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    if level.upper() != "DEBUG":
        # Library loggers print request URLs, which may carry credentials.
        for name in CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
    return logging.getLogger("etl_craft.task")
