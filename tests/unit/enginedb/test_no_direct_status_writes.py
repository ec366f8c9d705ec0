"""Only the transitions module writes the STATUS of runs, task runs, attempts and workers, and
the fencing columns OWNER_ID and LEASE_EXPIRES_AT."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import etl_craft
from etl_craft.enginedb.named_statements import DIALECTS, statements

STATUS_TABLES = r"(AUD_PIPELINES_RUN_LOG|AUD_TASK_RUN_LOG|AUD_TASK_ATTEMPTS|AUD_WORKERS)"
FENCED_COLUMNS = r"(STATUS|OWNER_ID|LEASE_EXPIRES_AT)"
# An assignment in a SET list follows SET or a comma; a WHERE's comparisons follow neither.
STATUS_WRITE = re.compile(
    rf"UPDATE\s+{STATUS_TABLES}\b.*?(?:\bSET|,)\s*{FENCED_COLUMNS}\s*="
    rf"|INSERT\s+INTO\s+{STATUS_TABLES}\b",
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
    assert {
        "transition_finish_attempt",
        "transition_admit_run",
        "transition_create_run",
        "transition_register_worker",
        "transition_retire_worker",
    } <= writers


@pytest.mark.parametrize(
    "name",
    [
        "transition_renew_attempt_lease",
        "transition_renew_run_lease",
        "transition_release_run_lease",
        "transition_claim_run_lease",
        "transition_beat_worker",
    ],
)
def test_the_fencing_statements_count_as_writes(name: str) -> None:
    assert STATUS_WRITE.search(statements("postgresql")[name].sql)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE AUD_TASK_ATTEMPTS SET LEASE_EXPIRES_AT = NULL WHERE ATTEMPT_ID = 1",
        "UPDATE AUD_TASK_ATTEMPTS SET HEARTBEAT_AT = now(), OWNER_ID = 'x' WHERE ATTEMPT_ID = 1",
        "update aud_pipelines_run_log\n   set MESSAGE = 'x',\n       owner_id = null",
        "UPDATE AUD_WORKERS SET STATUS = 'GONE' WHERE WORKER_ID = 'w'",
    ],
)
def test_a_write_of_a_fenced_column_is_found(sql: str) -> None:
    assert STATUS_WRITE.search(sql)


def test_a_fenced_column_that_is_only_compared_is_no_write() -> None:
    sql = "UPDATE AUD_TASK_ATTEMPTS SET HEARTBEAT_AT = now() WHERE OWNER_ID = :o AND STATUS = 'X'"
    assert not STATUS_WRITE.search(sql)


def test_only_the_transitions_package_runs_transition_statements() -> None:
    offenders = [
        str(path)
        for root in SOURCE_ROOTS
        for path in root.rglob("*.py")
        if TRANSITIONS_PACKAGE not in path.parents and '"transition_' in path.read_text()
    ]
    assert offenders == []


def test_no_python_source_holds_a_status_write() -> None:
    pattern = re.compile(
        rf"{STATUS_WRITE.pattern}|\bSET\s+{FENCED_COLUMNS}\b", re.IGNORECASE | re.DOTALL
    )
    offenders = [
        str(path)
        for root in SOURCE_ROOTS
        for path in root.rglob("*.py")
        if pattern.search(path.read_text())
    ]
    assert offenders == []
