"""Fault points for the chaos suite: a no-op unless ETL_CRAFT_FAULT names the point.

``ETL_CRAFT_FAULT=name`` raises InjectedFaultError there; ``name:kill`` sends the process a
real SIGKILL, so nothing of its own cleanup runs; ``name:stop`` sends it SIGSTOP, a pause at
exactly that point that lasts until someone sends SIGCONT (a stall, a stopped VM), after which it
carries on as if nothing had happened.
"""

from __future__ import annotations

import os
import signal
from functools import cache

from etl_craft.core.errors import InjectedFaultError

VARIABLE = "ETL_CRAFT_FAULT"


@cache
def _armed() -> tuple[str, str] | None:
    value = os.environ.get(VARIABLE, "").strip()
    if not value:
        return None
    name, _, mode = value.partition(":")
    return name, mode


def fault_point(name: str) -> None:
    armed = _armed()
    if armed is None or armed[0] != name:
        return
    if armed[1] == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
        return
    if armed[1] == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    raise InjectedFaultError(f"injected fault at {name} ({VARIABLE}={os.environ[VARIABLE]})")
