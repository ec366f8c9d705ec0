"""Codes and identifiers."""

from __future__ import annotations

import re

CODE_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")
CODE_RULE = "a letter followed by up to 127 letters, digits or underscores"


def is_code(value: str) -> bool:
    return CODE_PATTERN.fullmatch(value) is not None
