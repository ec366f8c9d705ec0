"""Replace every secret etl-craft resolved itself by *** before text reaches a log or an email.

etl-craft can only promise this for values it resolved (Connector.secrets); anything a script
prints that it obtained elsewhere is beyond its reach.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

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
