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
from dataclasses import dataclass
from typing import Any

MASK = "***"
TOKEN_PREFIX = "etlc_"  # noqa: S105 (marks a string as an etl-craft token; not a secret)
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

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(self._secrets)

    def safe_cut(self, data: bytes) -> int:
        """Where ``data`` may be cut with both parts masked apart: no secret spans the cut, and
        what follows it is long enough to hold the start of any secret ``data`` ends with."""
        encoded = [secret.encode("utf-8") for secret in self._secrets]
        cut = len(data) - max((len(secret) for secret in encoded), default=1) + 1
        moved = True
        while moved and cut > 0:
            moved = False
            for secret in encoded:
                start = data.find(secret, max(0, cut - len(secret) + 1), cut + len(secret) - 1)
                if start != -1 and start < cut:
                    cut, moved = start, True
        return max(cut, 0)


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


# Parameter names whose values are secrets (S7.C), matched case-insensitively; a project
# changes them with Redaction.sensitive_patterns.
SENSITIVE_PATTERNS = ("*TOKEN*", "*SECRET*", "*PASSWORD*", "*KEY*")
# A task parameter holding a JSON object of script inputs, whose keys are judged like names.
INPUT_PARAMS = "INPUT_PARAMS"


@dataclass(frozen=True)
class SensitiveNames:
    """Which parameter names hold secrets: those matching a pattern, except the ``declared``
    ones. A handler's declared parameter (MERGE_KEY, KEY_COLUMNS) means what its declaration
    says, whatever its name, so it is never masked; a script's INPUT_PARAMS keys are never
    declared, so each is judged by the patterns alone."""

    patterns: tuple[str, ...] = SENSITIVE_PATTERNS
    declared: frozenset[str] = frozenset()

    def parameter(self, name: str) -> bool:
        return name.upper() not in self.declared and self.key(name)

    def key(self, name: str) -> bool:
        upper = name.upper()
        return any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in self.patterns)


DEFAULT_NAMES = SensitiveNames()


def mask_parameter(
    name: str, value: str | None, names: SensitiveNames = DEFAULT_NAMES
) -> str | None:
    """A parameter's value as it may be shown: masked whole, or per key for INPUT_PARAMS."""
    if value is None:
        return None
    if names.parameter(name):
        return MASK
    if name.upper() == INPUT_PARAMS:
        loaded = _json_object(value)
        if loaded is not None:
            return json.dumps(_mask_keys(loaded, names))
    return value


def parameter_secrets(
    parameters: Iterable[tuple[str, str | None]], names: SensitiveNames = DEFAULT_NAMES
) -> set[str]:
    """The values ``mask_parameter`` hides, so that they can be masked wherever else they show."""
    found: set[str] = set()
    for name, value in parameters:
        if value is None:
            continue
        if names.parameter(name):
            found.add(value)
        elif name.upper() == INPUT_PARAMS:
            found |= _sensitive_leaves(_json_object(value) or {}, names)
    return found


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, never through a mask: a cut *** would
    read as ordinary text, so a mask that does not fit whole is left out whole."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    start = text.rfind(MASK, max(0, limit - len(MASK) + 1), limit + len(MASK) - 1)
    if start != -1 and start < limit < start + len(MASK):
        cut = text[:start]
    return cut


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


def _mask_keys(value: Any, names: SensitiveNames) -> Any:
    if isinstance(value, dict):
        return {
            key: MASK if names.key(str(key)) and item is not None else _mask_keys(item, names)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_mask_keys(item, names) for item in value]
    return value


def _sensitive_leaves(value: Any, names: SensitiveNames) -> set[str]:
    if isinstance(value, dict):
        found: set[str] = set()
        for key, item in value.items():
            if names.key(str(key)) and item is not None:
                found |= _leaves(item)
            else:
                found |= _sensitive_leaves(item, names)
        return found
    if isinstance(value, list):
        return {leaf for item in value for leaf in _sensitive_leaves(item, names)}
    return set()


def _leaves(value: Any) -> set[str]:
    """Every scalar under a secret key: ``{"password": {"old": "a", "new": "b"}}`` hides both,
    as ``_mask_keys`` does, so both are secrets."""
    if isinstance(value, dict):
        return {leaf for item in value.values() for leaf in _leaves(item)}
    if isinstance(value, list):
        return {leaf for item in value for leaf in _leaves(item)}
    return set() if value is None or isinstance(value, bool) else {str(value)}
