"""Replace every secret etl-craft resolved itself by *** before text reaches a log or an email.

etl-craft can only promise this for values it resolved (Connector.secrets); anything a script
prints that it obtained elsewhere is beyond its reach. Parameters whose names look secret
(S7.C) are masked wherever etl-craft shows them.
"""

from __future__ import annotations

import fnmatch
import json
import logging
from collections.abc import Iterable
from typing import Any

MASK = "***"
# A secret shorter than this is ignored: masking "ab" or "1" would shred ordinary text (every
# "1" in a row count would become ***) and hide nothing, because so short a value is guessed
# faster than it is read from a log.
MIN_SECRET_LENGTH = 4


class Redactor:
    """Masks a fixed set of secrets; longest first, so a secret holding another is masked whole."""

    def __init__(self, secrets: Iterable[str]) -> None:
        kept = {secret for secret in secrets if len(secret) >= MIN_SECRET_LENGTH}
        self._secrets = sorted(kept, key=lambda secret: (-len(secret), secret))

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def __bool__(self) -> bool:
        return bool(self._secrets)


def redact(text: str, secrets: Iterable[str]) -> str:
    return Redactor(secrets)(text)


class RedactingFilter(logging.Filter):
    """A handler filter that renders each record, masks it, and freezes the result in the record."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = self._redactor(record.getMessage())
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redactor(record.exc_text)
        # Arguments may hold the secret too; the masked message replaces message and arguments.
        record.msg, record.args = message, None
        return True


# Parameter names whose values are secrets (S7.C), matched case-insensitively.
SENSITIVE_PATTERNS = ("*TOKEN*", "*SECRET*", "*PASSWORD*", "*KEY*")
# A task parameter holding a JSON object of script inputs, whose keys are judged like names.
INPUT_PARAMS = "INPUT_PARAMS"


def is_sensitive(name: str) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SENSITIVE_PATTERNS)


def mask_parameter(name: str, value: str | None) -> str | None:
    """A parameter's value as it may be shown: masked whole, or per key for INPUT_PARAMS."""
    if value is None:
        return None
    if is_sensitive(name):
        return MASK
    if name.upper() == INPUT_PARAMS:
        loaded = _json_object(value)
        if loaded is not None:
            return json.dumps(_mask_keys(loaded))
    return value


def parameter_secrets(parameters: Iterable[tuple[str, str | None]]) -> set[str]:
    """The values ``mask_parameter`` hides, so that they can be masked wherever else they show."""
    found: set[str] = set()
    for name, value in parameters:
        if value is None:
            continue
        if is_sensitive(name):
            found.add(value)
        elif name.upper() == INPUT_PARAMS:
            found |= _sensitive_leaves(_json_object(value) or {})
    return found


def mask_strings(value: Any, redactor: Redactor) -> Any:
    """A JSON-like document with every string passed through ``redactor``."""
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, dict):
        return {key: mask_strings(item, redactor) for key, item in value.items()}
    if isinstance(value, list):
        return [mask_strings(item, redactor) for item in value]
    return value


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        loaded = json.loads(text)
    except ValueError:
        return None
    return loaded if isinstance(loaded, dict) else None


def _mask_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            key: MASK if is_sensitive(str(key)) and item is not None else _mask_keys(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_mask_keys(item) for item in value]
    return value


def _sensitive_leaves(value: Any) -> set[str]:
    if isinstance(value, dict):
        found: set[str] = set()
        for key, item in value.items():
            if is_sensitive(str(key)) and isinstance(item, str | int | float):
                found.add(str(item))
            else:
                found |= _sensitive_leaves(item)
        return found
    if isinstance(value, list):
        return {leaf for item in value for leaf in _sensitive_leaves(item)}
    return set()
