"""Alert subjects and bodies: flavours, their default templates, and filling them in.

Templates are Python format strings over a vocabulary of tokens given as data (by default
handlers.parameters.ALERT_TOKENS), so validate, the docs and the renderer agree on one list.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Mapping
from enum import StrEnum

from etl_craft.core.errors import MetadataError
from etl_craft.handlers.parameters import ALERT_TOKENS

MAX_SUBJECT = 200
_WHITESPACE = re.compile(r"\s+")


class Flavour(StrEnum):
    FAILURE = "FAILURE"
    SUCCESS = "SUCCESS"
    SLA = "SLA"
    DIGEST = "DIGEST"


DEFAULT_SUBJECTS: Mapping[Flavour, str] = {
    Flavour.FAILURE: "[etl-craft] {pipeline_code} run {run_id} {status}: {error}",
    Flavour.SUCCESS: "[etl-craft] {pipeline_code} run {run_id} {status} after {duration}",
    Flavour.SLA: "[etl-craft] {pipeline_code} run {run_id} missed its SLA ({status})",
    Flavour.DIGEST: "[etl-craft] digest of {pipeline_code} for {run_date}",
}

DEFAULT_BODY = (
    "Pipeline: {pipeline_code}\nRun: {run_id} ({run_key}), run date {run_date}\n"
    "Status: {status}\nDuration: {duration}\nFailed tasks: {failed_tasks}\n"
    "Alert task: {task_code}\n\n{error}"
)


def render(
    template: str,
    values: Mapping[str, object],
    *,
    name: str,
    vocabulary: Mapping[str, str] = ALERT_TOKENS,
) -> str:
    """``template`` with its {tokens} filled; an unknown token is refused, naming it."""
    try:
        fields = {field for _, field, _, _ in string.Formatter().parse(template) if field}
    except ValueError as error:
        raise MetadataError(
            f"{name} {template!r} has unpaired braces ({error}); write {{{{ and }}}} for braces"
        ) from error
    unknown = sorted(fields - vocabulary.keys())
    if unknown:
        raise MetadataError(
            f"{name} uses {{{unknown[0]}}}, which is not a token; expected only "
            f"{', '.join('{' + token + '}' for token in vocabulary)}"
        )
    filled = {token: "" if values.get(token) is None else str(values[token]) for token in fields}
    return template.format_map(filled)


def one_line(subject: str) -> str:
    """The subject as one safe header line: whitespace runs collapsed, controls dropped, capped."""
    line = _WHITESPACE.sub(" ", subject)
    line = "".join(ch for ch in line if not unicodedata.category(ch).startswith("C")).strip()
    if len(line) > MAX_SUBJECT:
        line = line[: MAX_SUBJECT - 1].rstrip() + "…"
    return line
