"""Fault points for the chaos suite: a no-op unless ETL_CRAFT_FAULT names the point.

``ETL_CRAFT_FAULT=name`` raises InjectedFaultError there; ``name:kill`` ends the process at
once with exit status 137, as a kill -9 would, without running any cleanup.
"""

from __future__ import annotations

import os
from functools import cache

from etl_craft.core.errors import InjectedFaultError

VARIABLE = "ETL_CRAFT_FAULT"
KILLED = 137


@cache
def _armed() -> tuple[str, bool] | None:
    value = os.environ.get(VARIABLE, "").strip()
    if not value:
        return None
    name, _, mode = value.partition(":")
    return name, mode == "kill"


def fault_point(name: str) -> None:
    armed = _armed()
    if armed is None or armed[0] != name:
        return
    if armed[1]:
        os._exit(KILLED)
    raise InjectedFaultError(f"injected fault at {name} ({VARIABLE}={os.environ[VARIABLE]})")
