"""A PYTHON task attempt: run the ingestion script with its stored offset and INPUT_PARAMS.

A task with FILE_PATTERN instead of SCRIPT runs the built-in file load (handlers/files).
"""

from __future__ import annotations

import logging
import sys
from dataclasses import replace
from typing import Any

from etl_craft.core.errors import MetadataError
from etl_craft.enginedb.offsets import OffsetType, stored_offset
from etl_craft.handlers.files.load import load_files
from etl_craft.handlers.files.spec import read_spec
from etl_craft.handlers.invocation import HandlerResult, Task
from etl_craft.handlers.scripts.contract import ScriptContext
from etl_craft.handlers.scripts.runner import (
    check_stored,
    parse_input_params,
    parse_offset_type,
    run_script,
)


def run_python_task(task: Task) -> HandlerResult:
    invocation, environment = task.invocation, task.environment
    code = invocation.task_code
    script = task.parameter("SCRIPT")
    if task.parameter("FILE_PATTERN") is not None:
        return _load_files(task, script)
    if script is None:
        raise MetadataError(
            f"task {code} has no SCRIPT; set it to a file under ingestion_scripts/ "
            "with a project migration, or set FILE_PATTERN to load files without a script"
        )
    if environment.project is None:
        raise MetadataError(f"task {code} runs script {script}, but no project folder is known")
    offset_type = parse_offset_type(task.parameter("OFFSET_TYPE"), code)
    context = script_context(
        task, offset_type, parse_input_params(task.parameter("INPUT_PARAMS"), code)
    )
    outcome = run_script(
        environment.project.ingestion_scripts_dir,
        script,
        context,
        log=sys.stderr,
        redactor=environment.redactor,
        log_path=environment.log_path,
    )
    # HAS_DATA dependencies read ROWS_WRITTEN: the rows the script reports it loaded.
    counts = replace(outcome.counts, rows_written=outcome.counts.inserted)
    return HandlerResult(counts=counts, offset=outcome.offset)


def _load_files(task: Task, script: str | None) -> HandlerResult:
    code, project = task.invocation.task_code, task.environment.project
    if script is not None:
        raise MetadataError(
            f"task {code} sets both SCRIPT ({script!r}) and FILE_PATTERN "
            f"({task.parameter('FILE_PATTERN')!r}); expected exactly one: delete one of them "
            "in CFG_TASK_PARAMETERS"
        )
    spec = read_spec(code, task.parameter)
    if project is None:
        raise MetadataError(f"task {code} loads {spec.pattern}, but no project folder is known")
    return load_files(spec, script_context(task, OffsetType.TEXT, {}), project.root)


def script_context(
    task: Task, offset_type: OffsetType | None, input_params: dict[str, Any]
) -> ScriptContext:
    """The context of the attempt, with the offset stored for the task."""
    invocation, code = task.invocation, task.invocation.task_code
    # Read with the attempt's claim: no attempt of this task can store one meanwhile.
    stored = stored_offset(invocation.task_id, invocation.offset_type, invocation.offset_value)
    check_stored(stored, offset_type, code)
    return ScriptContext(
        offset=stored.value if stored is not None else None,
        offset_type=offset_type,
        input_params=input_params,
        run_date=invocation.run_date,
        pipeline_id=invocation.pipeline_id,
        pipeline_run_id=invocation.pipeline_run_id,
        task_id=invocation.task_id,
        task_run_id=invocation.task_run_id,
        attempt_id=invocation.attempt_id,
        log=logging.getLogger(f"etl_craft.script.{code}"),
        warehouse_settings=task.environment.connector.warehouse,
    )
