"""Which function runs a task of each handler kind."""

from __future__ import annotations

from collections.abc import Callable

from etl_craft.core.enums import Handler
from etl_craft.core.errors import MetadataError
from etl_craft.handlers.alert_task import run_alert_task
from etl_craft.handlers.invocation import HandlerResult, Task
from etl_craft.handlers.python_task import run_python_task
from etl_craft.handlers.rules_task import run_rules_task
from etl_craft.handlers.sql_task import run_sql_task

HANDLERS: dict[Handler, Callable[[Task], HandlerResult]] = {
    Handler.SQL: run_sql_task,
    Handler.PYTHON: run_python_task,
    Handler.BUSINESS_RULES: run_rules_task,
    Handler.EMAIL_ALERT: run_alert_task,
}


def run_handler(task: Task) -> HandlerResult:
    handler = HANDLERS.get(task.invocation.handler)
    if handler is None:
        raise MetadataError(
            f"task {task.invocation.task_code} uses handler {task.invocation.handler}, which this "
            f"etl-craft can't run; expected one of {', '.join(sorted(HANDLERS))}"
        )
    return handler(task)
