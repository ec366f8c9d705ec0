"""A metadata edit's checks and SQL literals, before any Engine DB is involved."""

from __future__ import annotations

import sqlite3

import pytest

from etl_craft.core.enums import EditKind
from etl_craft.core.errors import UsageError
from etl_craft.operations.metadata.edit_checks import MetadataEdit, check_edit
from etl_craft.operations.metadata.edit_sql import sql_literal


@pytest.mark.parametrize(
    "value", ["plain", "O'Brien", "'); DELETE FROM CFG_TASKS; --", "two\nlines", "/* x */", ""]
)
def test_a_text_literal_reads_back_as_the_text_itself(value: str) -> None:
    with sqlite3.connect(":memory:") as db:
        assert db.execute(f"SELECT {sql_literal(value)}").fetchone() == (value,)


def test_numbers_and_null_are_written_bare_and_a_nul_character_is_refused() -> None:
    assert (sql_literal(42), sql_literal(None)) == ("42", "NULL")
    with pytest.raises(UsageError, match="NUL character"):
        sql_literal("a\x00b")


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (MetadataEdit(EditKind.TASK, {"pipeline": "orders", "task": "bad code"}), "code rule"),
        (MetadataEdit(EditKind.TASK, {"pipeline": "orders"}), "code rule"),
        (
            MetadataEdit(EditKind.TASK, {"pipeline": "p", "task": "t"}, after={"HANDLER": "X"}),
            "expected one of SQL, PYTHON",
        ),
        (
            MetadataEdit(EditKind.PIPELINE, {"pipeline": "p"}, after={"PRIORITY": "high"}),
            "expected a whole number",
        ),
        (
            MetadataEdit(EditKind.PIPELINE, {"pipeline": "p"}, after={"NOPE": "1"}),
            "has no field NOPE",
        ),
        (MetadataEdit(EditKind.TASK, {"pipeline": "p", "task": "t"}, before={}), "switched off"),
        (
            MetadataEdit(
                EditKind.TASK,
                {"pipeline": "p", "task": "t"},
                before={"DESCRIPTION": "a"},
                after={"DESCRIPTION": "a"},
            ),
            "changes no field",
        ),
    ],
)
def test_an_edit_that_cannot_make_a_sound_file_is_refused_naming_why(
    edit: MetadataEdit, problem: str
) -> None:
    with pytest.raises(UsageError, match=problem):
        check_edit(edit)
