"""SCD2_MERGE by a source column through real runs: the source's times that don't move a key
forward are settled and counted in the Engine DB under the default SCD2_STALE_ROWS, and refused,
with the way past, under REFUSE."""

from __future__ import annotations

from datetime import UTC, date
from typing import Any

from etl_craft.warehouse.connection import WarehouseConnection
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.history.test_scd2_history import warehouse
from tests.integration.rehash.rehash_site import pipelines_sql

SELECT = "SELECT id, name, changed_at FROM src.times"


def merge(target: str, **more: str) -> dict[str, str]:
    return {
        "ACTION": "SCD2_MERGE",
        "TARGET_OBJECT": target,
        "SOURCE_SQL": SELECT,
        "MERGE_KEY": "id",
        "SCD2_VALID_FROM": "COLUMN",
        "SCD2_VALID_FROM_COLUMN": "changed_at",
        "SCD2_MISSING_KEYS": "CLOSE",
    } | more


def setup(target: str) -> dict[str, str]:
    return {"ACTION": "SETUP_TABLE", "TARGET_OBJECT": target, "SOURCE_SQL": SELECT}


METADATA = pipelines_sql(
    ("times_setup", "settle", setup("dm.settled")),
    ("times_setup", "refuse", setup("dm.refused")),
    ("times", "settle", merge("dm.settled")),
    ("times", "refuse", merge("dm.refused", SCD2_STALE_ROWS="REFUSE")),
)


def at(hour: int) -> str:
    return f"CAST('2024-05-01 {hour:02d}:00:00+00' AS TIMESTAMP WITH TIME ZONE)"


def load(project: ProjectOnDisk, values: str) -> None:
    with warehouse(project) as conn:
        conn.execute("empty the source", "DELETE FROM src.times")
        conn.execute("fill the source", f"INSERT INTO src.times VALUES {values}")


def run(project: ProjectOnDisk, pipeline: str, key: str) -> tuple[int, str]:
    run_id = project.new_run(pipeline, f"manual:{key}", date(2024, 5, 1))
    return run_id, project.supervisor(poll_seconds=0.2).supervise(run_id).status.value


def attempts(project: ProjectOnDisk, run_id: int) -> dict[str, tuple[Any, ...]]:
    """Per task: status, same-time, stale and reopened key counts, and the error message."""
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT k.TASK_CODE, a.STATUS, a.SAME_TIME_KEY_COUNT, a.STALE_KEY_COUNT, "
            "a.REOPENED_KEY_COUNT, a.ERROR_MESSAGE FROM AUD_TASK_ATTEMPTS a "
            "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
            "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID WHERE t.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).all()
    return {row[0]: tuple(row[1:]) for row in rows}


def versions(conn: WarehouseConnection, target: str) -> list[tuple[Any, ...]]:
    found = conn.fetch_all(
        "read the history", f"SELECT id, name, VALID_FROM, VALID_TO, ACTIVE_FLAG FROM {target}"
    )
    hours = [
        (
            row[0],
            row[1],
            row[2].astimezone(UTC).hour,
            row[3] and row[3].astimezone(UTC).hour,
            row[4],
        )
        for row in found
    ]
    return sorted(hours, key=lambda version: (version[0], version[2]))


def test_source_times_settled_counted_and_refused_through_runs(project: ProjectOnDisk) -> None:
    project.migrate("0001_times.sql", METADATA)
    with warehouse(project) as conn:
        conn.execute("create the source schema", "CREATE SCHEMA src")
        conn.execute(
            "create the source",
            "CREATE TABLE src.times (id INTEGER, name VARCHAR(10), "
            "changed_at TIMESTAMP WITH TIME ZONE)",
        )
    assert run(project, "times_setup", "setup")[1] == "SUCCESS"
    load(project, f"(1, 'a', {at(10)}), (2, 'b', {at(10)}), (3, 'c', {at(8)})")
    assert run(project, "times", "first")[1] == "SUCCESS"
    load(project, f"(1, 'a', {at(10)}), (2, 'b', {at(10)})")  # closes key 3 at 10:00
    assert run(project, "times", "second")[1] == "SUCCESS"
    # Key 1 changes at its own time, key 2 goes back to 09:00, key 3 returns from 08:00.
    load(project, f"(1, 'a2', {at(10)}), (2, 'b2', {at(9)}), (3, 'c', {at(8)})")

    run_id, status = run(project, "times", "third")

    assert status == "FAILED"
    found = attempts(project, run_id)
    assert found["settle"] == ("SUCCESS", 1, 1, 1, None)
    refused = found["refuse"]
    assert refused[:4] == ("FAILED", None, None, None)
    assert "SCD2_STALE_ROWS is REFUSE" in refused[4]
    assert "set SCD2_STALE_ROWS = IGNORE on the task" in refused[4]
    with warehouse(project) as conn:
        assert versions(conn, "dm.settled") == [
            (1, "a", 10, None, "Y"),
            (2, "b", 10, None, "Y"),
            (3, "c", 8, 10, "N"),
            (3, "c", 10, None, "Y"),
        ]
        assert versions(conn, "dm.refused") == [
            (1, "a", 10, None, "Y"),
            (2, "b", 10, None, "Y"),
            (3, "c", 8, 10, "N"),
        ]
