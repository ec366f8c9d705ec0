"""Strict whole numbers in the paths and queries of the API and the UI.

pydantic reads "1.0", "+1" and " 1" as the number 1, so one resource would answer under many
addresses and a typo would pass for an id; an id or offset here is digits only.
"""

from __future__ import annotations

import re

from pydantic import BeforeValidator

_DIGITS = re.compile(r"[0-9]{1,19}")


def digits_only(value: object) -> object:
    if isinstance(value, str) and not _DIGITS.fullmatch(value):
        raise ValueError(
            "is not a whole number written in digits; expected digits only, such as 42 "
            "(no sign, decimal point or spaces)"
        )
    return value


WholeNumber = BeforeValidator(digits_only)
