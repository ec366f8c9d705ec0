"""The outcome a task process hands to its owner, which records it on its own connection.

A task process's first statements on a new Engine DB connection cost it more than a no-op task
does: the connection, and a new server backend that has yet to load the tables and triggers
an outcome touches. So a task process whose owner lives writes its outcome to a file beside
its log and exits; the owner, woken by the exit, records it (SOURCE stays CHILD) on a warm
connection, guarded by its ownership like any outcome. A task process whose owner died
records its own outcome, as one started by hand does.

A task process ends some milliseconds after it handed its outcome over (the kernel unmaps what
it shared with the fork server). So that the outcome is recorded before that, the owner may
listen on a doorbell, a datagram socket named in the task's environment, which the task process
rings once its outcome file is in place; the owner then records the outcome while the process
ends, and frees its slot once it has.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path

from etl_craft.core.counts import Counts
from etl_craft.core.enums import AttemptStatus
from etl_craft.enginedb.offsets import Offset
from etl_craft.enginedb.transitions import AttemptOutcome

OUTCOME_PATH_VARIABLE = "ETL_CRAFT_OUTCOME_PATH"
DOORBELL_VARIABLE = "ETL_CRAFT_DOORBELL"


@dataclass(frozen=True)
class HandedOutcome:
    task_id: int
    outcome: AttemptOutcome
    offset: Offset | None


def outcome_path(log_path: Path) -> Path:
    return log_path.with_name(f"{log_path.name}.outcome.json")


def hand_over(path: Path, handed: HandedOutcome) -> None:
    """Write the outcome whole or not at all: a temporary file, then renamed into place."""
    outcome, offset = handed.outcome, handed.offset
    document = {
        "task_id": handed.task_id,
        "status": outcome.status.value,
        "counts": asdict(outcome.counts),
        "error_message": outcome.error_message,
        "exit_code": outcome.exit_code,
        "retryable": outcome.retryable,
        "offset": None if offset is None else [offset.type.value, offset.encode()],
    }
    written = path.with_name(f"{path.name}.partial")
    written.write_text(json.dumps(document))
    written.replace(path)


def take_outcome(path: Path, *, writer_gone: bool = True) -> HandedOutcome | None:
    """The outcome handed over at ``path``, removed from disk; None when there is none. Once
    the task process is gone, what it left half-written goes too; while it lives, it may be
    writing it."""
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    finally:
        if writer_gone:
            path.with_name(f"{path.name}.partial").unlink(missing_ok=True)
    path.unlink(missing_ok=True)
    offset = document["offset"]
    return HandedOutcome(
        task_id=int(document["task_id"]),
        outcome=AttemptOutcome(
            AttemptStatus(document["status"]),
            Counts(**document["counts"]),
            error_message=document["error_message"],
            exit_code=document["exit_code"],
            retryable=bool(document["retryable"]),
            source="CHILD",
        ),
        offset=None if offset is None else Offset.decode(offset[0], offset[1]),
    )


class Doorbell:
    """The owner's end: a datagram socket in the abstract namespace (no file to clean up), its
    name unique to this owner process."""

    def __init__(self) -> None:
        self.name = f"etl-craft-doorbell-{os.getpid()}-{os.urandom(8).hex()}"
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind("\0" + self.name)
        self.socket.setblocking(False)

    def descriptor(self) -> int:
        return self.socket.fileno()

    def drain(self) -> bool:
        """Whether it rang since the last drain."""
        rang = False
        while True:
            try:
                self.socket.recv(64)
            except BlockingIOError:
                return rang
            rang = True


def ring(name: str) -> None:
    """The task process's end: a missed ring only delays the recording to the process's exit.
    Never waits: an owner that does not drain its doorbell (the Engine DB is away) would hold
    every process that rings a full one."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as bell:
            bell.setblocking(False)
            bell.sendto(b"1", "\0" + name)
    except OSError:
        pass
