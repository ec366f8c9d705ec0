"""Only the transitions module writes the STATUS of runs, task runs and attempts."""

from __future__ import annotations

import re
from pathlib import Path

import etl_craft
from etl_craft.enginedb.queries import DIALECTS, statements

STATUS_TABLES = r"(AUD_PIPELINES_RUN_LOG|AUD_TASK_RUN_LOG|AUD_TASK_ATTEMPTS)"
STATUS_WRITE = re.compile(
    rf"UPDATE\s+{STATUS_TABLES}\b.*?\bSET\b.*?\bSTATUS\s*=|INSERT\s+INTO\s+{STATUS_TABLES}\b",
    re.IGNORECASE | re.DOTALL,
)
SOURCE_ROOTS = [Path(etl_craft.__file__).parent, *Path(__file__).parents[3].glob("services/*/src")]
TRANSITIONS_PACKAGE = Path(etl_craft.__file__).parent / "enginedb" / "transitions"


def test_only_transition_statements_write_status() -> None:
    offenders = [
        f"{dialect}: {statement.name} ({statement.source})"
        for dialect in DIALECTS
        for statement in statements(dialect).values()
        if STATUS_WRITE.search(statement.sql) and not statement.name.startswith("transition_")
    ]
    assert offenders == []


def test_the_transition_statements_do_write_status() -> None:
    writers = {
        statement.name
        for statement in statements("postgresql").values()
        if STATUS_WRITE.search(statement.sql)
    }
    assert {"transition_finish_attempt", "transition_admit_run", "transition_create_run"} <= writers


def test_only_the_transitions_package_runs_transition_statements() -> None:
    offenders = [
        str(path)
        for root in SOURCE_ROOTS
        for path in root.rglob("*.py")
        if TRANSITIONS_PACKAGE not in path.parents and '"transition_' in path.read_text()
    ]
    assert offenders == []


def test_no_python_source_holds_a_status_write() -> None:
    pattern = re.compile(rf"{STATUS_WRITE.pattern}|\bSET\s+STATUS\b", re.IGNORECASE | re.DOTALL)
    offenders = [
        str(path)
        for root in SOURCE_ROOTS
        for path in root.rglob("*.py")
        if pattern.search(path.read_text())
    ]
    assert offenders == []
