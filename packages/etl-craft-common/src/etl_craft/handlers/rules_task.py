"""A BUSINESS_RULES task attempt: judge its rules, commit the flags, fail on INCOMPLETE keys."""

from __future__ import annotations

from etl_craft.handlers.invocation import HandlerResult, Task
from etl_craft.handlers.rules.handler import run_business_rules
from etl_craft.handlers.rules.model import RulesRun
from etl_craft.warehouse import connect


def run_rules_task(task: Task) -> HandlerResult:
    invocation, environment = task.invocation, task.environment
    warehouse_settings = environment.connector.warehouse
    rules_run = RulesRun(
        task_id=invocation.task_id,
        task_code=invocation.task_code,
        pipeline_id=invocation.pipeline_id,
        pipeline_run_id=invocation.pipeline_run_id,
        task_run_id=invocation.task_run_id,
        run_date=invocation.run_date,
        forced=False,
        ledger_schema=warehouse_settings.ledger_schema,
        pipeline_code=invocation.pipeline_code,
        run_key=invocation.run_key,
        pipeline_parameters=invocation.pipeline_parameters,
        pipeline_parameter_types=invocation.pipeline_parameter_types,
    )
    # The flags commit before the outcome is known, so an INCOMPLETE failure still shows
    # which keys it stands on.
    with (
        connect(warehouse_settings) as warehouse,
        environment.engine.transaction(environment.actor) as conn,
    ):
        result = run_business_rules(conn, warehouse, rules_run)
    environment.log.info("%s", result.task_log)
    incomplete = result.incomplete()
    if incomplete is not None:
        raise incomplete
    return HandlerResult(counts=result.counts, message=result.task_log)
