"""Every secret etl-craft resolved is masked, the longest first; very short values are left."""

from __future__ import annotations

import logging

from etl_craft.core.redaction import MASK, RedactingFilter, Redactor, redact


def test_every_occurrence_is_masked() -> None:
    assert redact("pw=hunter22 again hunter22", ["hunter22"]) == f"pw={MASK} again {MASK}"


def test_a_secret_containing_another_is_masked_whole() -> None:
    # Shortest first would leave "s3cret" + "-suffix" half visible.
    assert redact("token s3cret-suffix", ["s3cret", "s3cret-suffix"]) == f"token {MASK}"


def test_secrets_shorter_than_four_characters_are_ignored() -> None:
    assert redact("1 row, abc", ["1", "abc"]) == "1 row, abc"


def test_log_records_are_masked_in_message_arguments_and_traceback() -> None:
    record = logging.LogRecord(
        "x", logging.ERROR, __file__, 1, "connect %s", ("pw=hunter22",), None
    )
    try:
        raise ValueError("bad hunter22")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    RedactingFilter(Redactor(["hunter22"])).filter(record)
    assert record.getMessage() == f"connect pw={MASK}"
    assert record.exc_text is not None
    assert "hunter22" not in record.exc_text
