"""Log records of a task process carry the attempt they belong to, secrets masked."""

from __future__ import annotations

import logging
import sys

from etl_craft.core.redaction import RedactingFilter, Redactor
from etl_craft.enginedb.attempts import AttemptInvocation
from etl_craft.runtime.tracing import trace_id

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


class AttemptContext(logging.Filter):
    """Stamps pipeline, task, run id, task run id, attempt number and trace id on every record."""

    def __init__(self, invocation: AttemptInvocation, trace: str | None = None) -> None:
        super().__init__()
        self.fields = {
            "pipeline": invocation.pipeline_code,
            "task": invocation.task_code,
            "pipeline_run_id": invocation.pipeline_run_id,
            "task_run_id": invocation.task_run_id,
            "attempt": invocation.attempt_number,
            "trace_id": trace or "",
        }

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in self.fields.items():
            setattr(record, name, value)
        return True


TEXT_FORMAT = (
    "%(asctime)s %(levelname)s [%(pipeline)s.%(task)s run=%(pipeline_run_id)s "
    "task_run=%(task_run_id)s attempt=%(attempt)s] %(name)s: %(message)s"
)


TRACED_FORMAT = TEXT_FORMAT.replace("]", " trace=%(trace_id)s]", 1)


def configure_task_logging(
    invocation: AttemptInvocation, level: str, redactor: Redactor
) -> logging.Logger:
    """Route every record of the process to stderr (the attempt log) with its context.

    Call it inside the attempt's span: its trace id, when there is one, is on every line.
    """
    trace = trace_id()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(TRACED_FORMAT if trace else TEXT_FORMAT))
    handler.addFilter(AttemptContext(invocation, trace))
    if redactor:
        handler.addFilter(RedactingFilter(redactor))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    if level.upper() != "DEBUG":
        # Library loggers print request URLs, which may carry credentials.
        for name in CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
    return logging.getLogger("etl_craft.task")
