"""How many Engine DB connections the one engine of each kind of process holds at most.

A task process holds at most one, and only while it speaks to the Engine DB (NullPool). A
worker's loop and its listener need two, and its attempts' outcomes and heartbeats one more
per eight slots. The overseer, the API and the web UI pool Orchestration.db_pool_size.
"""

from __future__ import annotations

import math

DEFAULT_POOL_SIZE = 10
WORKER_BASE_CONNECTIONS = 2  # the claiming loop and the LISTEN connection
SLOTS_PER_CONNECTION = 8


def worker_pool_size(slots: int) -> int:
    """The pool of a worker with ``slots`` slots of every kind together."""
    return WORKER_BASE_CONNECTIONS + math.ceil(slots / SLOTS_PER_CONNECTION)


def pool_size(configured: int | None, slots: int | None = None) -> int:
    """``configured`` (Orchestration.db_pool_size) when set; else a worker's pool for its
    ``slots``, or the default of every other process."""
    if configured is not None:
        return configured
    return DEFAULT_POOL_SIZE if slots is None else worker_pool_size(slots)
