"""The overseer's leadership: a lock that decides who may lead, and an epoch that fences.

The lock lives as long as the leading process: a PostgreSQL session advisory lock on a
dedicated connection, or an exclusive file lock beside an SQLite Engine DB. A process killed
with -9 loses it with its connection or file descriptor, so the next server takes over without
anyone cleaning up. But a lock can also go while its holder lives on: an Engine DB restart ends
the session (and PostgreSQL frees its locks), and a lock file removed from its folder leaves
its path free for another process to lock.

So taking the lock starts a new epoch in AUD_LEADERSHIP, and every leader-only write (ticks,
admission, GONE marks, reconciliation) checks, first in its own transaction, that its epoch is
still the current one (``fence``): a former leader's write is refused by the Engine DB even in
the moment before it notices, and on PostgreSQL the checked row stays share-locked until the
write commits, so a takeover waits for it rather than slipping in between. The leader confirms
that it still holds its lock once per poll and after any failure to reach the Engine DB: when
the lock went, it takes it again on a fresh session (a new epoch) if nobody else did, and steps
down otherwise.
"""

from __future__ import annotations

import fcntl
import logging
import os
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from etl_craft.core.actor import Actor
from etl_craft.core.errors import EngineDBError, RunStateError
from etl_craft.core.time import as_utc
from etl_craft.enginedb.connection import EngineConnection, EngineDB

log = logging.getLogger(__name__)


class LeadershipLostError(RunStateError):
    """An overseer found that it no longer leads: another took a later epoch while its lock
    was gone. Its leader-only write was refused; it steps down."""


@dataclass(frozen=True)
class Tenure:
    """The current epoch and who took it."""

    epoch: int
    overseer_id: str
    taken_at: datetime | None


def current_tenure(conn: EngineConnection) -> Tenure | None:
    row = conn.one("current_leadership")
    if row is None:
        return None
    return Tenure(int(row["epoch"]), str(row["overseer_id"]), as_utc(row["taken_at"]))


class Leadership:
    """The lock and epoch of one overseer, from ``acquire`` until ``release`` or its end."""

    def __init__(self, engine: EngineDB, overseer_id: str) -> None:
        self.engine, self.overseer_id = engine, overseer_id
        self.epoch: int | None = None
        self._stack = ExitStack()
        self._session: EngineConnection | None = None
        self._file: IO[bytes] | None = None

    def acquire(self, actor: Actor) -> bool:
        """Take the lock if it is free and start the next epoch; False (holding nothing) when
        another process has the lock. Raises EngineDBError when the Engine DB can't be reached."""
        try:
            if self._locked():
                with self.engine.transaction(actor) as conn:
                    self.epoch = int(conn.scalar("take_leadership", overseer_id=self.overseer_id))
                return True
        except BaseException:
            self.release()
            raise
        self.release()
        return False

    def holds(self) -> bool:
        """Whether the lock is still this process's: its session still answers (PostgreSQL
        frees a session's locks only when it ends), or the lock file at the path is still the
        one it locked."""
        if self._session is not None:
            try:
                with self.engine.translated():
                    self._session.scalar("leadership_session_alive")
            except EngineDBError:
                return False
            return True
        if self._file is not None:
            return _same_file(self._file, sqlite_lock_path(self.engine))
        return False

    def confirm(self, actor: Actor) -> None:
        """Still leading, or leading again under a new epoch; LeadershipLostError when another
        process took the lock while this one's was gone."""
        if self.holds():
            return
        lost = self.epoch
        self.release()
        if self.acquire(actor):
            log.warning(
                "overseer %s lost its leadership lock (the Engine DB restarted or the lock file "
                "was removed) and took it again: epoch %s follows %s",
                self.overseer_id,
                self.epoch,
                lost,
            )
            return
        with self.engine.read() as conn:
            tenure = current_tenure(conn)
        raise LeadershipLostError(self._deposed(lost, tenure))

    def fence(self, conn: EngineConnection) -> None:
        """Refuse the transaction unless this overseer's epoch is the current one."""
        if self.epoch is not None and conn.one("hold_leadership", epoch=self.epoch) is not None:
            return
        raise LeadershipLostError(self._deposed(self.epoch, current_tenure(conn)))

    def release(self) -> None:
        if self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file = None
        self._session = None
        with suppress(EngineDBError):  # a session the Engine DB ended: its lock went with it
            self._stack.close()
        self._stack = ExitStack()

    def _locked(self) -> bool:
        if self.engine.dialect == "postgresql":
            session = self._stack.enter_context(self.engine.session())
            with self.engine.translated():
                locked = session.scalar("try_overseer_lock")
            if not locked:
                return False
            self._session = session
            return True
        path = sqlite_lock_path(self.engine)
        handle = self._stack.enter_context(path.open("ab"))
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        if not _same_file(handle, path):
            return False  # removed or replaced since it was opened: the path's file is another
        self._file = handle
        return True

    def _deposed(self, epoch: int | None, tenure: Tenure | None) -> str:
        holder = (
            "nobody holds a later one"
            if tenure is None or tenure.epoch == epoch
            else f"overseer {tenure.overseer_id} took epoch {tenure.epoch} at {tenure.taken_at}"
        )
        return (
            f"overseer {self.overseer_id} no longer leads: it held epoch {epoch}, and {holder} "
            "while its leadership lock was gone (an Engine DB restart or a removed lock file). "
            "Its leader-only writes are refused; it stops leader work and stands by"
        )


def _same_file(handle: IO[bytes], path: Path) -> bool:
    try:
        found = path.stat()
    except FileNotFoundError:
        return False
    held = os.fstat(handle.fileno())
    return (found.st_dev, found.st_ino) == (held.st_dev, held.st_ino)


def sqlite_lock_path(engine: EngineDB, holder: str = "overseer") -> Path:
    """The lock file beside an SQLite Engine DB that ``holder`` locks."""
    database = engine.url.database
    if not database or database == ":memory:":
        raise ValueError(f"an in-memory SQLite Engine DB can't be shared with an {holder}")
    return Path(f"{database}.{holder}.lock")
