"""What a clone reads from the Engine DB, and the clone lock that lets one clone run at a time.

The lock is a session advisory lock on PostgreSQL and a file lock beside an SQLite Engine DB,
like the overseer's leadership, but under its own name: a clone by hand and the overseer's
scheduled clone exclude each other, and neither holds anything a run waits for.
"""

from __future__ import annotations

import fcntl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.leadership import sqlite_lock_path
from etl_craft.enginedb.watermarks import MirroredTable

# How often a clone waiting for the lock tries again.
LOCK_RETRY_SECONDS = 0.2


def _stem(table: MirroredTable) -> str:
    return table.name.removeprefix("AUD_").lower()


def changed_rows(
    conn: EngineConnection,
    table: MirroredTable,
    after: tuple[datetime | str, int],
    until: datetime,
    batch: int,
) -> list[dict[str, Any]]:
    """Up to ``batch`` rows of ``table`` past the watermark ``after`` (UPDATED_AT, key) and
    written by ``until``, in watermark order, columns named in lower case."""
    rows = conn.all(
        f"clone_{_stem(table)}_changed",
        after_at=after[0],
        after_key=after[1],
        until_at=until,
        batch=batch,
    )
    return [{str(key).lower(): value for key, value in row.items()} for row in rows]


def kept_ids(conn: EngineConnection, table: MirroredTable, first_id: int, last_id: int) -> set[int]:
    """The keys of ``table`` between ``first_id`` and ``last_id`` still in the Engine DB."""
    rows = conn.all(f"clone_{_stem(table)}_kept", first_id=first_id, last_id=last_id)
    return {int(row["id"]) for row in rows}


@contextmanager
def clone_lock(engine: EngineDB, wait_seconds: float) -> Iterator[bool]:
    """Hold the clone lock for the block: True when taken within ``wait_seconds``, False when
    another clone kept it that long (the block then runs holding nothing)."""
    deadline = time.monotonic() + wait_seconds
    if engine.dialect == "postgresql":
        with engine.session() as session:
            taken = _wait(lambda: bool(session.scalar("try_clone_lock")), deadline)
            try:
                yield taken
            finally:
                if taken:
                    session.scalar("clone_unlock")
        return
    with sqlite_lock_path(engine, "clone").open("ab") as handle:
        taken = _wait(lambda: _try_flock(handle.fileno()), deadline)
        try:
            yield taken
        finally:
            if taken:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _wait(attempt: Any, deadline: float) -> bool:
    pause = threading.Event()
    while not attempt():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        pause.wait(min(LOCK_RETRY_SECONDS, left))
    return True


def _try_flock(descriptor: int) -> bool:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
