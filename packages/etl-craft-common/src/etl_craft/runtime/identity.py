"""Who owns an attempt: owner ids that survive PID reuse, and whether a process still lives."""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# The host this process says it runs on: its name, unless ETL_CRAFT_HOST_NAME gives another
# (a container whose name is random, or a test that plays two hosts on one machine).
HOST = os.environ.get("ETL_CRAFT_HOST_NAME") or socket.gethostname()


@dataclass(frozen=True)
class ProcessIdentity:
    host: str
    pid: int
    start: str  # the kernel's start time in clock ticks since boot; tells a reused PID apart


def process_start(pid: int) -> str | None:
    """The start time of ``pid`` as /proc reports it, or None when there is no such process."""
    fields = _stat_fields(pid)
    return None if fields is None else fields[19]


def is_zombie(pid: int) -> bool:
    """Whether ``pid`` has exited and waits only to be reaped (or is gone altogether)."""
    fields = _stat_fields(pid)
    return fields is None or fields[0] == "Z"


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from its third field (the state) on, or None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    return stat[stat.rindex(")") + 2 :].split()


def current_process() -> ProcessIdentity:
    pid = os.getpid()
    return ProcessIdentity(HOST, pid, process_start(pid) or "0")


@cache
def owner_id() -> str:
    """This process's owner id: host:pid:start-time:random, stable for the process's life."""
    return new_owner_id()


def new_owner_id() -> str:
    """Another owner id of this process, for a worker declared GONE that registers again."""
    me = current_process()
    return f"{me.host}:{me.pid}:{me.start}:{secrets.token_hex(4)}"


def parse_owner(owner: str) -> ProcessIdentity | None:
    parts = owner.rsplit(":", 3)
    if len(parts) != 4 or not parts[1].isdigit():
        return None
    return ProcessIdentity(parts[0], int(parts[1]), parts[2])


def alive_here(identity: ProcessIdentity) -> bool | None:
    """Whether the process lives: True/False on this host, None when it runs on another host."""
    if identity.host != HOST:
        return None
    # A process that has exited but not been reaped still has its /proc entry: it is dead.
    return process_start(identity.pid) == identity.start and not is_zombie(identity.pid)
