"""Every task parameter each handler reads, declared once for validate, the docs and the forms.

The SQL handler declares its own (handlers.sql.parameters); this module adds the parameters
every handler reads and those of the other handlers, and says what a well-formed value is.

Alert templates (SUBJECT and BODY of an EMAIL_ALERT task) are Python format strings whose
fields come from ALERT_TOKENS, e.g. ``{pipeline_code} run {run_id} {status} after {duration}``;
``{{`` and ``}}`` write a literal brace.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Mapping
from types import MappingProxyType

from etl_craft.core import ranges
from etl_craft.core.enums import Handler
from etl_craft.core.ranges import Range
from etl_craft.core.text import CODE_RULE, is_code
from etl_craft.handlers.files.spec import FILE_FORMS, FileFormat
from etl_craft.handlers.files.types import TYPE_LIST
from etl_craft.handlers.sql.parameters import SQL_PARAMETERS, ParameterDeclaration, ParameterType
from etl_craft.warehouse.targets import is_identifier

__all__ = [
    "ALERT_TOKENS",
    "ParameterDeclaration",
    "ParameterType",
    "declarations_for",
    "template_problem",
    "value_problem",
]

COMMON_PARAMETERS: tuple[ParameterDeclaration, ...] = (
    ParameterDeclaration(
        "TASK_TIMEOUT_SECONDS",
        ParameterType.TEXT,
        False,
        None,
        "Whole seconds an attempt may run before it is stopped and recorded TIMED_OUT.",
    ),
    ParameterDeclaration(
        "RETRIES",
        ParameterType.TEXT,
        False,
        None,
        "How many more attempts a failed one gets (default: Orchestration retries, else 0).",
    ),
    ParameterDeclaration(
        "RETRY_DELAY_SECONDS",
        ParameterType.TEXT,
        False,
        "60",
        "Whole seconds between a failed attempt and the next.",
    ),
    ParameterDeclaration(
        "RETRY_BACKOFF",
        ParameterType.TEXT,
        False,
        "2",
        "The factor (1 or more) the delay is multiplied by after each retry.",
    ),
    ParameterDeclaration(
        "POOL", ParameterType.TEXT, False, None, "The pool (CFG_POOLS) whose slots attempts use."
    ),
)

# TABLE_FORMAT belongs with the SQL handler's declarations; it lives here until that handler
# reads it, so validate can already hold every writer of a target to one format (S3.G.6).
STORAGE_PARAMETERS: tuple[ParameterDeclaration, ...] = (
    ParameterDeclaration(
        "TABLE_FORMAT",
        ParameterType.TEXT,
        False,
        None,
        "The table format of TARGET_OBJECT where the warehouse offers several (such as "
        "ICEBERG); unset means the warehouse's own. Every task writing a target uses one.",
    ),
)

# Read by lineage alone (lineage.slices): which rows of a shared table the task touches.
SLICE_PARAMETERS: tuple[ParameterDeclaration, ...] = (
    ParameterDeclaration(
        "SLICE_COLUMN",
        ParameterType.TEXT,
        False,
        None,
        "The column of a table several pipelines share that tells their rows apart: the task "
        "writes, and reads back, only the rows where it holds SLICE_VALUE.",
    ),
    ParameterDeclaration(
        "SLICE_VALUE",
        ParameterType.TEXT,
        False,
        None,
        "The value of SLICE_COLUMN in the task's rows; a token such as $$param.CLIENT gives "
        "each pipeline its own.",
    ),
    ParameterDeclaration(
        "SLICE_TABLE",
        ParameterType.TEXT,
        False,
        None,
        "The shared table the slice is of, when it is not TARGET_OBJECT.",
    ),
)

PYTHON_PARAMETERS: tuple[ParameterDeclaration, ...] = (
    ParameterDeclaration(
        "SCRIPT",
        ParameterType.PATH,
        False,
        None,
        "The script's path under ingestion_scripts/. Exactly one of SCRIPT and FILE_PATTERN.",
    ),
    ParameterDeclaration(
        "INPUT_PARAMS",
        ParameterType.TEXT,
        False,
        None,
        "A JSON object passed to the script as a dictionary.",
    ),
    ParameterDeclaration(
        "OFFSET_TYPE",
        ParameterType.CHOICE,
        False,
        None,
        "The type of the offset the script keeps between runs.",
        ("INT", "TEXT", "TIMESTAMP"),
    ),
    ParameterDeclaration(
        "TARGET_OBJECT",
        ParameterType.TEXT,
        False,
        None,
        "The table the script writes, schema.table, for lineage; the table files land in "
        "(required with FILE_PATTERN).",
    ),
    ParameterDeclaration(
        "FILE_PATTERN",
        ParameterType.TEXT,
        False,
        None,
        "Instead of SCRIPT, load the files this glob matches (relative to the project folder, "
        "or absolute), such as landing/orders/*.csv; each file lands once per content.",
    ),
    ParameterDeclaration(
        "FILE_FORMAT",
        ParameterType.CHOICE,
        False,
        None,
        "The format of the FILE_PATTERN files (required with FILE_PATTERN); .gz CSV and JSONL "
        "files are read gunzipped.",
        tuple(FileFormat),
    ),
    ParameterDeclaration(
        "FILE_COLUMNS",
        ParameterType.TEXT,
        False,
        None,
        f"The columns of the files, name TYPE, ... in file order; types: {TYPE_LIST}. Unset: "
        "the target's columns, else inferred from the first files loaded.",
    ),
    ParameterDeclaration(
        "CSV_HEADER",
        ParameterType.FLAG,
        False,
        "Y",
        "Y: a CSV file's first line names its columns, checked against the load's columns; "
        "N: there is none (FILE_COLUMNS required).",
    ),
    ParameterDeclaration(
        "CSV_DELIMITER",
        ParameterType.TEXT,
        False,
        ",",
        "The character between a CSV file's fields; TAB for a tab.",
    ),
    ParameterDeclaration(
        "CSV_NULL",
        ParameterType.TEXT,
        False,
        None,
        "The CSV field text read as NULL (default: an empty field).",
    ),
)

BUSINESS_RULES_PARAMETERS: tuple[ParameterDeclaration, ...] = (
    ParameterDeclaration(
        "TARGET_TABLE",
        ParameterType.TEXT,
        True,
        None,
        "The table the rules of CFG_BUSINESS_RULES check, schema.table.",
    ),
)

EMAIL_ALERT_PARAMETERS: tuple[ParameterDeclaration, ...] = (
    ParameterDeclaration(
        "FLAVOUR",
        ParameterType.CHOICE,
        True,
        None,
        "Which outcome the alert reports.",
        ("FAILURE", "SUCCESS", "SLA", "DIGEST"),
    ),
    ParameterDeclaration(
        "RECIPIENTS", ParameterType.TEXT, True, None, "E-mail addresses, separated by commas."
    ),
    ParameterDeclaration(
        "SUBJECT", ParameterType.TEXT, False, None, "The subject template (see ALERT_TOKENS)."
    ),
    ParameterDeclaration(
        "BODY", ParameterType.TEXT, False, None, "The body template (see ALERT_TOKENS)."
    ),
)

_BY_HANDLER: Mapping[Handler, tuple[ParameterDeclaration, ...]] = MappingProxyType(
    {
        Handler.SQL: SQL_PARAMETERS + STORAGE_PARAMETERS + SLICE_PARAMETERS,
        Handler.PYTHON: PYTHON_PARAMETERS + SLICE_PARAMETERS,
        Handler.BUSINESS_RULES: BUSINESS_RULES_PARAMETERS + SLICE_PARAMETERS,
        Handler.EMAIL_ALERT: EMAIL_ALERT_PARAMETERS,
    }
)


def declarations_for(handler: Handler) -> tuple[ParameterDeclaration, ...]:
    """Every parameter a task of ``handler`` reads: the common ones, then the handler's."""
    return COMMON_PARAMETERS + _BY_HANDLER[handler]


ALERT_TOKENS: Mapping[str, str] = MappingProxyType(
    {
        "pipeline_code": "the pipeline's code",
        "task_code": "the alert task's code",
        "failed_tasks": "the codes of the run's failed tasks, in the order they ran, or none",
        "run_id": "the pipeline run id (PIPELINE_RUN_ID)",
        "run_key": "the run's key, such as schedule:2026-01-01T06:00:00+00:00",
        "run_date": "the run's logical date, YYYY-MM-DD",
        "status": "the outcome: SUCCESS, FAILED, SKIPPED, CANCELLED or SLA MISSED",
        "error": "the first error message of the run, empty when there is none",
        "duration": "how long the run took, such as 12m 5s",
    }
)


def template_problem(template: str) -> str | None:
    """Why ``template`` can't be filled from ALERT_TOKENS, or None when it can."""
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as error:
        return f"its braces don't pair up ({error}); write {{{{ and }}}} for literal braces"
    unknown = sorted({name for name in fields if name not in ALERT_TOKENS})
    if not unknown:
        return None
    shown = ", ".join("{" + name + "}" for name in unknown)
    return f"it uses {shown}; expected only {', '.join('{' + t + '}' for t in ALERT_TOKENS)}"


def _number(allowed: Range) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        try:
            allowed.parse(value)
        except ValueError as error:
            return str(error)
        return None

    return check


def _pool(value: str) -> str | None:
    return None if is_code(value) else f"expected a pool name: {CODE_RULE}"


def _json_object(value: str) -> str | None:
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as error:
        return f"it is not JSON ({error.msg} at character {error.pos}); expected a JSON object"
    return None if isinstance(parsed, dict) else 'expected a JSON object such as {"days": 3}'


def _recipients(value: str) -> str | None:
    bad = [item.strip() for item in value.split(",") if "@" not in item.strip()[1:-1]]
    return (
        f"{bad[0]!r} is not an address; expected addresses such as ops@example.com" if bad else None
    )


def _one_column(value: str) -> str | None:
    if not is_identifier(value.strip()):
        return "expected one plain column name of the SELECT, such as updated_at"
    return None


_FORMS: Mapping[str, Callable[[str], str | None]] = MappingProxyType(
    {
        "TASK_TIMEOUT_SECONDS": _number(ranges.TIMEOUT_SECONDS),
        "RETRIES": _number(ranges.RETRIES),
        "RETRY_DELAY_SECONDS": _number(ranges.SECONDS),
        "RETRY_BACKOFF": _number(ranges.BACKOFF),
        "POOL": _pool,
        "INPUT_PARAMS": _json_object,
        "RECIPIENTS": _recipients,
        **FILE_FORMS,
        "SCD2_VALID_FROM_COLUMN": _one_column,
    }
)


def value_problem(declaration: ParameterDeclaration, value: str) -> str | None:
    """What is wrong with ``value`` for ``declaration``: the expectation, or None when it fits."""
    if declaration.type is ParameterType.CHOICE and value not in declaration.choices:
        return f"expected one of {', '.join(declaration.choices)}"
    if declaration.type is ParameterType.FLAG and value not in ("Y", "N"):
        return "expected Y or N"
    if declaration.type is ParameterType.COLUMNS:
        bad = [name.strip() for name in value.split(",") if not is_identifier(name.strip())]
        if bad:
            return (
                f"{bad[0]!r} is not a plain column name; expected letters, digits and "
                "underscores, separated by commas"
            )
    form = _FORMS.get(declaration.name)
    return None if form is None else form(value)
