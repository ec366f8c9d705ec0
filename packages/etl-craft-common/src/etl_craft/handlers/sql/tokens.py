"""The tokens of a SQL task's SELECT, and the pipeline parameters it reads as `$$param.NAME`
(or `$$ident.NAME`), checked before it runs."""

from __future__ import annotations

from collections.abc import Mapping

from etl_craft.core.errors import MetadataError
from etl_craft.warehouse.literals import EXPECTED, ParameterKind, parameter_kind, value_problem
from etl_craft.warehouse.substitution import (
    IDENTIFIER_PREFIX,
    PARAMETER_PREFIX,
    PipelineParameter,
    parameters_used,
)

# The tokens replaced only when the task switches them on (PIPELINE_ID_SUBSTITUTION and
# PIPELINE_ID_FILTER); the run's code, key and parameters are always replaced.
SWITCHED = {
    "pipeline_id": "PIPELINE_ID_SUBSTITUTION",
    "pipeline_run_id": "PIPELINE_ID_SUBSTITUTION",
    "task_run_id": "PIPELINE_ID_SUBSTITUTION",
    "run_date": "PIPELINE_ID_SUBSTITUTION",
    "pipeline_id_filter": "PIPELINE_ID_FILTER",
}
# What each token becomes, for the reference docs.
TOKEN_DESCRIPTIONS = {
    "pipeline_id": "the pipeline's PIPELINE_ID, a number",
    "pipeline_run_id": "the run's PIPELINE_RUN_ID, a number",
    "task_run_id": "the task run's TASK_RUN_ID, a number",
    "run_date": "the run's date, a date literal such as CAST('2026-01-31' AS DATE)",
    "pipeline_id_filter": "1 = 1 with REFRESH_TYPE FULL, pipeline_id = 7 (its PIPELINE_ID) with "
    "INCREMENTAL",
    "pipeline_code": "the pipeline's PIPELINE_CODE, a string literal",
    "run_key": "the run's key, a string literal such as 'schedule:2026-01-31T06:00:00Z'",
    PARAMETER_PREFIX + "NAME": "the value of the pipeline's parameter NAME "
    "(CFG_PIPELINE_PARAMETERS), a literal of its PARAMETER_TYPE: STRING a string, INT and "
    "DECIMAL a number, BOOLEAN TRUE or FALSE, DATE a date, JSON a JSON value; NULL when the "
    "value is NULL",
    IDENTIFIER_PREFIX + "NAME": "the value of the pipeline's parameter NAME of PARAMETER_TYPE "
    "IDENTIFIER, as a name where a table, schema or column stands: checked to be a plain name "
    '(lnd.client_a) and quoted for the warehouse ("lnd"."client_a")',
}


def read_parameters(
    sql: str,
    pipeline_code: str,
    values: Mapping[str, str | None],
    types: Mapping[str, str],
    subject: str,
) -> dict[str, PipelineParameter]:
    """Each parameter ``sql`` reads, with its value checked against its PARAMETER_TYPE.

    A token of an undeclared parameter, or a value its type can't read, is refused here: the
    SQL never runs with a token left in it or a value of the wrong type.
    """
    found = {}
    names = parameters_used(sql)
    identifiers = parameters_used(sql, IDENTIFIER_PREFIX)
    for name in dict.fromkeys(names + identifiers):
        token = f"$${PARAMETER_PREFIX if name in names else IDENTIFIER_PREFIX}{name}"
        if name not in values:
            declared = ", ".join(sorted(values)) or "none"
            raise MetadataError(
                f"{subject} reads {token}, but pipeline {pipeline_code} declares no "
                f"parameter {name} (it declares: {declared}); add {name} to "
                f"CFG_PIPELINE_PARAMETERS of {pipeline_code} or fix the token"
            )
        kind = parameter_kind(types.get(name, "STRING"))
        if name in identifiers:
            _check_identifier(name, kind, values[name], f"{pipeline_code}", subject)
        text = values[name]
        if value_problem(kind, text) is not None:
            raise MetadataError(
                f"parameter {name} of pipeline {pipeline_code} is {text!r}, which its "
                f"PARAMETER_TYPE {kind} can't read; expected {EXPECTED[kind]} (read by "
                f"{token} in {subject}); fix PARAMETER_VALUE or PARAMETER_TYPE in "
                "CFG_PIPELINE_PARAMETERS"
            )
        found[name] = PipelineParameter(name, kind, text)
    return found


def _check_identifier(
    name: str, kind: ParameterKind, text: str | None, pipeline_code: str, subject: str
) -> None:
    """`$$ident.NAME` names a table or column: only an IDENTIFIER with a value can."""
    token = f"$${IDENTIFIER_PREFIX}{name}"
    if kind is not ParameterKind.IDENTIFIER:
        raise MetadataError(
            f"{subject} reads {token}, but parameter {name} of pipeline {pipeline_code} has "
            f"PARAMETER_TYPE {kind}; expected IDENTIFIER, the only type that can stand for a "
            f"name; set its PARAMETER_TYPE to IDENTIFIER, or read its value as "
            f"$${PARAMETER_PREFIX}{name}"
        )
    if text is None:
        raise MetadataError(
            f"{subject} reads {token}, but parameter {name} of pipeline {pipeline_code} is "
            f"NULL; expected {EXPECTED[kind]}; give it a PARAMETER_VALUE in "
            "CFG_PIPELINE_PARAMETERS"
        )
