"""Process groups: stop an attempt's process and every descendant it started."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from etl_craft.runtime.identity import is_zombie, process_start


def descendants(pid: int) -> dict[int, str]:
    """Every live descendant of ``pid`` with its start time (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found: dict[int, str] = {}
    stack = list(children.get(pid, []))
    while stack:
        child = stack.pop()
        start = process_start(child)
        if start is not None:
            found[child] = start
            stack.extend(children.get(child, []))
    return found


def stop_group(pid: int, grace_seconds: float) -> list[int]:
    """SIGTERM the process group of ``pid``, SIGKILL what survives the grace; returns survivors."""
    family = {pid: process_start(pid) or "", **descendants(pid)}
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_seconds
    while time.monotonic() < deadline and _living(family):
        time.sleep(0.05)
    _signal_group(pid, signal.SIGKILL)
    # Descendants that left the group (setsid, daemonising) are killed one by one.
    for member, start in _living(family).items():
        with contextlib.suppress(ProcessLookupError):
            if process_start(member) == start:
                os.kill(member, signal.SIGKILL)
    return sorted(_living(family))


def _living(family: dict[int, str]) -> dict[int, str]:
    alive = {}
    for member, start in family.items():
        if process_start(member) == start and not is_zombie(member):
            alive[member] = start
    return alive


def _signal_group(pid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)
