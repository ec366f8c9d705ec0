"""The Engine DB connections etl-craft's processes may hold together, against what the
PostgreSQL server lets them open: what doctor reports as the connection budget."""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.enginedb.pool_budget import pool_size
from etl_craft.enginedb.server_checks import ConnectionUse, LiveWorker

WARNING_SHARE = 0.8
REMEDY = (
    "lower Orchestration.db_pool_size, give workers fewer slots, raise the server's "
    "max_connections, or put PgBouncer in transaction mode in front of the API, the web UI, "
    "the workers and their task processes; never in front of the overseer, whose leadership "
    "and cloning locks are session advisory locks"
)


@dataclass(frozen=True)
class Demand:
    process: str
    connections: int
    why: str


@dataclass(frozen=True)
class ConnectionBudget:
    demands: tuple[Demand, ...]
    total: int
    max_connections: int
    reserved: int  # kept for superusers
    available: int  # max_connections less reserved: what etl-craft's logins may open
    open_now: int
    over: bool  # the total, or the connections open now, pass WARNING_SHARE of available


def over_budget(connections: int, available: int) -> bool:
    return connections > WARNING_SHARE * available


def connection_budget(use: ConnectionUse, db_pool_size: int | None) -> ConnectionBudget:
    """Every process's most, from the server's live rows; ``db_pool_size`` is the project's
    Orchestration.db_pool_size (None: each kind's default)."""
    pool = pool_size(db_pool_size)
    source = "Orchestration.db_pool_size" if db_pool_size is not None else "the default"
    overseers = max(1, use.overseers)  # the budget plans for the server, running or not
    slots = sum(worker.slots for worker in use.workers)
    demands = [
        Demand(
            f"overseer x{overseers}",
            overseers * pool,
            f"a pool of {pool} ({source}) each, its advisory-lock session and listener included",
        ),
        *(_worker_demand(worker, db_pool_size) for worker in use.workers),
        Demand(
            "task processes",
            max(slots, use.tasks),
            f"one connection each at most: the live workers' {slots} slots, {use.tasks} "
            "running now",
        ),
        Demand("api", pool, f"a pool of {pool} ({source})"),
        Demand("ui", pool, f"a pool of {pool} ({source})"),
    ]
    total = sum(demand.connections for demand in demands)
    available = use.max_connections - use.reserved
    return ConnectionBudget(
        demands=tuple(demands),
        total=total,
        max_connections=use.max_connections,
        reserved=use.reserved,
        available=available,
        open_now=use.connections,
        over=over_budget(max(total, use.connections), available),
    )


def _worker_demand(worker: LiveWorker, db_pool_size: int | None) -> Demand:
    pool = (
        f"a pool of {db_pool_size} (Orchestration.db_pool_size)"
        if db_pool_size is not None
        else "a pool of 2 + 1 per 8 slots"
    )
    return Demand(
        f"worker {worker.worker_id}",
        pool_size(db_pool_size, worker.slots),
        f"{worker.slots} slot(s): {pool}",
    )


def describe(budget: ConnectionBudget) -> str:
    """The total against what the server allows, then one line per process."""
    share = budget.total / budget.available if budget.available > 0 else float("inf")
    head = (
        f"budget {budget.total} of {budget.available} connections ({share:.0%}): "
        f"max_connections {budget.max_connections} less {budget.reserved} reserved; "
        f"{budget.open_now} open now"
    )
    if budget.over:
        threshold = WARNING_SHARE * budget.available
        head += f"; above {WARNING_SHARE:.0%} of {budget.available}, {threshold:g}"
    lines = [f"{d.process}: {d.connections} ({d.why})" for d in budget.demands]
    return "\n".join([head, *lines])
