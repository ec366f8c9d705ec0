"""Run one ingestion script attempt: load, call run(context), check the whole result."""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from etl_craft.core.counts import Counts
from etl_craft.core.errors import MetadataError, ScriptError
from etl_craft.core.redaction import Redactor
from etl_craft.enginedb.offsets import Offset, OffsetType
from etl_craft.handlers.scripts.capture import captured
from etl_craft.handlers.scripts.contract import ScriptContext, check_result
from etl_craft.handlers.scripts.loader import load_script

ENTRY_POINT = "run"


@dataclass(frozen=True)
class ScriptOutcome:
    # The one row count a script reports is its source, target and insert count.
    counts: Counts
    # To be stored with the attempt's SUCCESS (enginedb.offsets.finish_with_offset), or None.
    offset: Offset | None


def parse_input_params(text: str | None, task: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise MetadataError(
            f"INPUT_PARAMS of task {task} is not valid JSON ({error}); expected a JSON object "
            'such as {"source": "crm", "page_size": 500}'
        ) from error
    if not isinstance(value, dict):
        raise MetadataError(
            f"INPUT_PARAMS of task {task} is a JSON {type(value).__name__}; expected a JSON "
            'object such as {"source": "crm"}, which the script receives as a dict'
        )
    return value


def parse_offset_type(text: str | None, task: str) -> OffsetType | None:
    if text is None or not text.strip():
        return None
    try:
        return OffsetType(text.strip().upper())
    except ValueError:
        raise MetadataError(
            f"OFFSET_TYPE of task {task} is {text!r}; expected one of "
            f"{', '.join(OffsetType)}, or no OFFSET_TYPE for a script without an offset"
        ) from None


def check_stored(stored: Offset | None, offset_type: OffsetType | None, task: str) -> None:
    if stored is not None and offset_type is not None and stored.type is not offset_type:
        raise MetadataError(
            f"task {task} has a stored {stored.type} offset ({stored.encode()}) but OFFSET_TYPE "
            f"{offset_type}; set OFFSET_TYPE back to {stored.type}, or delete the stored offset "
            "to start over"
        )


def run_script(
    scripts_dir: Path,
    script: str,
    context: ScriptContext,
    *,
    log: TextIO,
    redactor: Redactor,
    log_path: Path | None = None,
) -> ScriptOutcome:
    """Run ``script``'s run(context) with its output captured in ``log``; nothing is stored here."""
    with captured(log, redactor):
        module = load_script(scripts_dir, script)
        entry = getattr(module, ENTRY_POINT, None)
        if not callable(entry):
            raise ScriptError(
                f"script {script} has no {ENTRY_POINT}(context) function; define "
                f"def {ENTRY_POINT}(context: ScriptContext) -> ScriptResult in it"
            )
        try:
            result = entry(context)
        except Exception as error:
            log.write(redactor(traceback.format_exc()))
            raise ScriptError(
                redactor(
                    f"script {script} raised {type(error).__name__}: {error}; see the "
                    f"attempt log{f' {log_path}' if log_path else ''} for its traceback. "
                    "The stored offset is unchanged"
                )
            ) from error
    checked = check_result(result, context.offset_type, script)
    rows = checked.row_count
    return ScriptOutcome(Counts(source=rows, target=rows, inserted=rows), checked.offset)
