"""Codes and identifiers."""

from __future__ import annotations

import re

CODE_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")
CODE_RULE = "a letter followed by up to 127 letters, digits or underscores"


def is_code(value: str) -> bool:
    return CODE_PATTERN.fullmatch(value) is not None


# A PostgreSQL role name that needs no quoting, so it can stand in generated SQL as it is.
ROLE_PATTERN = re.compile(r"[a-z_][a-z0-9_]{0,62}")
ROLE_RULE = (
    "a lower-case letter or underscore, then up to 62 lower-case letters, digits or underscores"
)


def is_role_name(value: str) -> bool:
    return ROLE_PATTERN.fullmatch(value) is not None


def quoted_identifier(name: str) -> str:
    """``name`` as a PostgreSQL identifier that stands for itself, whatever its characters."""
    return '"' + name.replace('"', '""') + '"'


NUL = "\x00"
NUL_PROBLEM = "holds a NUL character (\\u0000); remove it"


def holds_nul(value: object) -> bool:
    """Whether ``value`` is text with a NUL: PostgreSQL refuses one in text (SQLite would keep
    it), and no name, key or reason needs one, so every entry point refuses it the same way."""
    return isinstance(value, str) and NUL in value
