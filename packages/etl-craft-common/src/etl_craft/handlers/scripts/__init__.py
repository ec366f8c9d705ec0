"""The PYTHON handler: ingestion scripts under ingestion_scripts/ with stored offsets."""

from etl_craft.handlers.scripts.contract import ScriptContext, ScriptResult, check_result
from etl_craft.handlers.scripts.loader import load_script, module_name
from etl_craft.handlers.scripts.runner import (
    ScriptOutcome,
    check_stored,
    parse_input_params,
    parse_offset_type,
    run_script,
)

__all__ = [
    "ScriptContext",
    "ScriptOutcome",
    "ScriptResult",
    "check_result",
    "check_stored",
    "load_script",
    "module_name",
    "parse_input_params",
    "parse_offset_type",
    "run_script",
]
