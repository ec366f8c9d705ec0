"""An EMAIL_ALERT task attempt: fill the flavour's templates from the run and send them."""

from __future__ import annotations

from datetime import datetime

from etl_craft.core.errors import MetadataError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.runs import read_pipeline_shape, read_run, read_task_runs
from etl_craft.handlers.alerts.handler import Alert, parse_recipients, send_alert
from etl_craft.handlers.alerts.templates import Flavour
from etl_craft.handlers.invocation import HandlerResult, Task


def run_alert_task(task: Task) -> HandlerResult:
    invocation, environment = task.invocation, task.environment
    flavour_text = (task.parameter("FLAVOUR", Flavour.FAILURE.value) or "").upper()
    try:
        flavour = Flavour(flavour_text)
    except ValueError:
        raise MetadataError(
            f"FLAVOUR of task {invocation.task_code} is {flavour_text!r}; expected one of "
            f"{', '.join(Flavour)}"
        ) from None
    alert = Alert(
        flavour=flavour,
        recipients=parse_recipients(task.parameter("RECIPIENTS"), invocation.task_code),
        subject_template=task.parameter("SUBJECT"),
        body_template=task.parameter("BODY"),
        values=_values(task, flavour),
    )
    outcome = send_alert(environment.connector.email, alert, environment.redactor)
    if outcome.warning:
        environment.log.warning("%s", outcome.warning)
    environment.log.info("%s", outcome.task_log)
    return HandlerResult(message=outcome.warning or outcome.task_log)


def _values(task: Task, flavour: Flavour) -> dict[str, object]:
    invocation = task.invocation
    with task.environment.engine.read() as conn:
        run = read_run(conn, invocation.pipeline_run_id)
        task_runs = sorted(
            read_task_runs(conn, invocation.pipeline_run_id).values(), key=lambda r: r.task_run_id
        )
        codes = {t.task_id: t.task_code for t in read_pipeline_shape(conn, run.pipeline_id).tasks}
    errors = [row.error_message for row in task_runs if row.error_message]
    failed = [codes.get(row.task_id, "?") for row in task_runs if row.status.value == "FAILED"]
    status = "SLA MISSED" if flavour is Flavour.SLA else ("FAILED" if failed else "SUCCESS")
    return {
        "pipeline_code": run.pipeline_code,
        "task_code": invocation.task_code,
        "failed_tasks": ", ".join(failed) or "none",
        "run_id": run.pipeline_run_id,
        "run_key": run.run_key,
        "run_date": run.run_date.isoformat(),
        "status": status,
        "error": errors[0] if errors else "",
        "duration": _duration(run.start_date, utc_now()),
    }


def _duration(start: datetime | None, now: datetime) -> str:
    if start is None:
        return "0s"
    seconds = int((now - start).total_seconds())
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}m {seconds}s" if minutes else f"{seconds}s"
