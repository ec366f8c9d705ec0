"""SCD2_MERGE over four batches, for each missing-key mode and validity source, through real
runs: the history's point-in-time state after each batch is that batch's source state, rebuilt
from the final history; the run that opened a version stays on it, the closing run is recorded
beside it, and the counts say how many keys were new, changed and unchanged."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any

from etl_craft.warehouse import connect
from etl_craft.warehouse.connection import WarehouseConnection
from tests.fixtures.metadata import execute
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.rehash.rehash_site import pipelines_sql

MODES = ("KEEP", "CLOSE", "NEW_RECORD")
SOURCES = ("COLUMN", "RUN_DATE")
COMBOS = [(mode, source) for mode in MODES for source in SOURCES]
SELECT = "SELECT id, name, note, changed_at, seq FROM src.items"
Row = tuple[int, str | None, str | None, datetime, int]  # id, name, note, changed_at, seq
State = dict[int, tuple[Any, ...]]  # key: its compared values


def at(day: int, hour: int) -> datetime:
    return datetime(2024, 1, day, hour, tzinfo=UTC)


# Each batch is the full source at its run date. NULL and '' differ; keys 3 and 6 come twice
# (identical rows), key 4 twice with one time and the dedupe order choosing; keys 1 and 4 change
# at one instant, as do 1 and 5; key 3 goes, returns and goes again; key 2 goes and returns
# changed.
BATCHES: list[tuple[date, list[Row]]] = [
    (
        date(2024, 1, 1),
        [
            (1, "a", None, at(1, 10), 1),
            (2, "b", "", at(1, 10), 1),
            (3, "c", "x", at(1, 9), 1),
            (3, "c", "x", at(1, 9), 1),
            (4, "d", None, at(1, 8), 1),
        ],
    ),
    (
        date(2024, 1, 2),
        [
            (1, "a", "", at(2, 10), 1),
            (2, "b", "", at(1, 10), 1),
            (4, "dX", None, at(2, 10), 1),
            (4, "d2", None, at(2, 10), 2),
            (5, "e", "", at(2, 9), 1),
        ],
    ),
    (
        date(2024, 1, 3),
        [
            (1, "a", None, at(3, 10), 1),
            (3, "c", "x", at(3, 9), 1),
            (4, "d2", None, at(2, 10), 2),
            (5, "e", "z", at(3, 10), 1),
        ],
    ),
    (
        date(2024, 1, 4),
        [
            (1, "a", None, at(3, 10), 1),
            (2, "b", "y", at(4, 10), 1),
            (4, "d2", None, at(2, 10), 2),
            (5, "e", "z", at(3, 10), 1),
            (6, "f", None, at(4, 10), 1),
            (6, "f", None, at(4, 10), 1),
        ],
    ),
]


def target(mode: str, source: str) -> str:
    return f"dm.h_{mode.lower()}_{source.lower()}"


def task_code(mode: str, source: str) -> str:
    return f"{mode.lower()}_{source.lower()}"


def setup_parameters(mode: str, source: str) -> dict[str, str]:
    return {"ACTION": "SETUP_TABLE", "TARGET_OBJECT": target(mode, source), "SOURCE_SQL": SELECT}


def merge_parameters(mode: str, source: str) -> dict[str, str]:
    parameters = {
        "ACTION": "SCD2_MERGE",
        "TARGET_OBJECT": target(mode, source),
        "SOURCE_SQL": SELECT,
        "MERGE_KEY": "id",
        "MERGE_DEDUPE_ORDER": "seq DESC",
        "MERGE_COMPARE_COLUMNS": ", ".join(compared(source)),
        "SCD2_VALID_FROM": source,
        "SCD2_MISSING_KEYS": mode,
    }
    if source == "COLUMN":
        parameters["SCD2_VALID_FROM_COLUMN"] = "changed_at"
    return parameters


def compared(source: str) -> tuple[str, ...]:
    # A change's own time says when, not what: compared only when the run date dates versions.
    return ("name", "note") if source == "COLUMN" else ("name", "note", "changed_at")


def values(row: Row, source: str) -> tuple[Any, ...]:
    return row[1:3] if source == "COLUMN" else row[1:4]


METADATA = pipelines_sql(
    *(("history_setup", task_code(m, s), setup_parameters(m, s)) for m, s in COMBOS),
    *(("history", task_code(m, s), merge_parameters(m, s)) for m, s in COMBOS),
)


@contextmanager
def warehouse(project: ProjectOnDisk) -> Iterator[WarehouseConnection]:
    # Opened and closed each time: a DuckDB file admits one process at a time.
    with connect(project.connector.warehouse) as conn:
        yield conn


def literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, datetime):
        return f"CAST('{value.isoformat()}' AS TIMESTAMP WITH TIME ZONE)"
    return f"'{value}'" if isinstance(value, str) else str(value)


def load(project: ProjectOnDisk, rows: list[Row]) -> None:
    listed = ", ".join(f"({', '.join(literal(v) for v in row)})" for row in rows)
    with warehouse(project) as conn:
        conn.execute("empty the source", "DELETE FROM src.items")
        conn.execute("fill the source", f"INSERT INTO src.items VALUES {listed}")


def run(project: ProjectOnDisk, pipeline: str, key: str, run_date: date) -> int:
    run_id = project.new_run(pipeline, f"manual:{key}", run_date)
    status = project.supervisor(poll_seconds=0.2).supervise(run_id).status.value
    assert status == "SUCCESS", f"run {run_id} of {pipeline} ended {status}"
    return run_id


@dataclass(frozen=True)
class Version:
    key: int
    values: tuple[Any, ...]
    valid_from: datetime
    valid_to: datetime | None
    active: bool
    deleted: bool
    opened_by: tuple[int, int]  # (PIPELINE_RUN_ID, TASK_RUN_ID)
    closed_by: tuple[int | None, int | None]  # the CLOSED_ ones


@dataclass
class Expected:
    """What the source says after each batch, and the counts each merge should record."""

    states: list[State] = field(default_factory=list)
    counts: list[tuple[int, ...]] = field(default_factory=list)


def deduped(rows: list[Row]) -> dict[int, Row]:
    """One row per key, the highest seq (MERGE_DEDUPE_ORDER); equal seqs are identical rows."""
    kept: dict[int, Row] = {}
    for row in rows:
        if row[0] not in kept or row[4] > kept[row[0]][4]:
            kept[row[0]] = row
    return kept


def as_of(source: str, run_date: date, rows: list[Row]) -> datetime:
    """The instant a batch describes: its latest change, or its run date."""
    if source == "COLUMN":
        return max(row[3] for row in rows)
    return datetime.combine(run_date, time(), UTC)


def model(mode: str, source: str) -> Expected:
    expected, state, tombstones = Expected(), State(), set[int]()
    for _, rows in BATCHES:
        batch = {key: values(row, source) for key, row in deduped(rows).items()}
        new = [key for key in batch if key not in state]
        changed = [key for key in batch if key in state and state[key] != batch[key]]
        missing = [] if mode == "KEEP" else [key for key in state if key not in batch]
        deletions = len(missing) if mode == "NEW_RECORD" else 0
        revived = len([key for key in new if key in tombstones])
        expected.counts.append(
            (
                len(new),
                len(changed),
                len(batch) - len(new) - len(changed),
                len(rows) - len(batch),
                len(missing),
                len(new) + len(changed) + deletions,
                len(changed) + revived,
            )
        )
        if mode == "NEW_RECORD":
            tombstones = (tombstones - set(batch)) | set(missing)
        state = dict(batch) if mode != "KEEP" else state | batch
        expected.states.append(state)
    return expected


def history(project: ProjectOnDisk, mode: str, source: str) -> list[Version]:
    with warehouse(project) as conn:
        found = conn.fetch_all(
            "read the history",
            "SELECT id, name, note, changed_at, VALID_FROM, VALID_TO, ACTIVE_FLAG, DELETE_FLAG, "
            "PIPELINE_RUN_ID, TASK_RUN_ID, CLOSED_PIPELINE_RUN_ID, CLOSED_TASK_RUN_ID "
            f"FROM {target(mode, source)}",
        )
    return sorted(
        (
            Version(
                row[0],
                values((row[0], row[1], row[2], utc(row[3]), 0), source),
                utc(row[4]),
                None if row[5] is None else utc(row[5]),
                row[6] == "Y",
                row[7] == "Y",
                (row[8], row[9]),
                (row[10], row[11]),
            )
            for row in found
        ),
        key=lambda version: (version.key, version.valid_from),
    )


def utc(value: Any) -> datetime:
    assert isinstance(value, datetime)
    assert value.tzinfo is not None
    return value.astimezone(UTC)


def state_at(versions: list[Version], instant: datetime) -> State:
    return {
        version.key: version.values
        for version in versions
        if version.valid_from <= instant
        and (version.valid_to is None or instant < version.valid_to)
        and not version.deleted
    }


def check_timeline(versions: list[Version], mode: str) -> None:
    """At most one open version per key; versions follow each other without overlap, and
    without gaps unless CLOSE left the key out for a while."""
    for key in {version.key for version in versions}:
        mine = [version for version in versions if version.key == key]
        assert sum(version.active for version in mine) <= 1, mine
        for version in mine:
            assert (version.valid_to is None) == version.active, version
            assert version.valid_to is None or version.valid_from < version.valid_to, version
        for before, after in itertools.pairwise(mine):
            assert before.valid_to is not None, mine
            assert before.valid_to <= after.valid_from, mine
            if mode != "CLOSE":
                assert before.valid_to == after.valid_from, mine


def batch_index(instants: list[datetime], moment: datetime | None) -> int | None:
    """The batch whose run set a version's start or end."""
    if moment is None:
        return None
    return next(i for i, instant in enumerate(instants) if moment <= instant)


def recorded(project: ProjectOnDisk, run_id: int) -> dict[str, tuple[int, tuple[int, ...]]]:
    """Per task: its task run id and (new, changed, unchanged, duplicate, delete, insert,
    update) counts."""
    with project.engine.read() as conn:
        rows = execute(
            conn,
            "SELECT k.TASK_CODE, t.TASK_RUN_ID, t.NEW_KEY_COUNT, t.CHANGED_KEY_COUNT, "
            "t.UNCHANGED_KEY_COUNT, t.DUPLICATE_COUNT, t.DELETE_COUNT, t.INSERT_COUNT, "
            "t.UPDATE_COUNT FROM AUD_TASK_RUN_LOG t JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
            "WHERE t.PIPELINE_RUN_ID = :r",
            r=run_id,
        ).all()
    return {row[0]: (row[1], tuple(row[2:])) for row in rows}


def test_history_states_run_ids_and_counts_after_four_batches(project: ProjectOnDisk) -> None:
    project.migrate("0001_history.sql", METADATA)
    with warehouse(project) as conn:
        conn.execute("create the source schema", "CREATE SCHEMA src")
        conn.execute(
            "create the source",
            "CREATE TABLE src.items (id INTEGER, name VARCHAR(20), note VARCHAR(20), "
            "changed_at TIMESTAMP WITH TIME ZONE, seq INTEGER)",
        )
    run(project, "history_setup", "setup", BATCHES[0][0])
    run_ids, runs = [], []
    for number, (run_date, rows) in enumerate(BATCHES, start=1):
        load(project, rows)
        run_ids.append(run(project, "history", f"batch{number}", run_date))
        runs.append(recorded(project, run_ids[-1]))
    for mode, source in COMBOS:
        check_combination(project, mode, source, runs, run_ids)


def check_combination(
    project: ProjectOnDisk,
    mode: str,
    source: str,
    runs: list[dict[str, tuple[int, tuple[int, ...]]]],
    run_ids: list[int],
) -> None:
    expected, versions = model(mode, source), history(project, mode, source)
    instants = [as_of(source, run_date, rows) for run_date, rows in BATCHES]
    check_timeline(versions, mode)
    for number, instant in enumerate(instants):
        assert state_at(versions, instant) == expected.states[number], (mode, source, number)
    code = task_code(mode, source)
    task_runs = [found[code][0] for found in runs]
    assert [found[code][1] for found in runs] == expected.counts, (mode, source)
    for version in versions:
        opened = batch_index(instants, version.valid_from)
        closed = batch_index(instants, version.valid_to)
        assert opened is not None
        assert version.opened_by == (run_ids[opened], task_runs[opened]), (mode, source, version)
        assert version.closed_by == (
            (None, None) if closed is None else (run_ids[closed], task_runs[closed])
        ), (mode, source, version)
    if mode == "NEW_RECORD":
        returned = [(v.deleted, v.active) for v in versions if v.key == 3]
        assert returned == [(False, False), (True, False), (False, False), (True, True)]
