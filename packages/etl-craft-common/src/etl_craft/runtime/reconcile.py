"""Reconciliation: settle attempts whose owner stopped renewing its lease.

Before declaring an attempt LOST, the warehouse attempt ledger is read: an action whose writes
committed is recorded SUCCESS with the ledger's counts, so it is never retried and never
reported failed. Only attempts with no ledger row (or that don't write through an action)
become LOST, and retries then follow the task's policy.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from etl_craft.config.sections import Warehouse
from etl_craft.core.actor import SYSTEM
from etl_craft.core.counts import Counts
from etl_craft.core.enums import Handler
from etl_craft.core.errors import StaleTransitionError
from etl_craft.core.time import utc_now
from etl_craft.enginedb.attempts import ExpiredAttempt, expired_attempts
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.transitions import lose_attempt, recover_attempt
from etl_craft.runtime.identity import ProcessIdentity, alive_here, owner_id, parse_owner
from etl_craft.runtime.metrics import LEASE_EXPIRIES
from etl_craft.runtime.processes import stop_group
from etl_craft.warehouse import connect

log = logging.getLogger(__name__)
LedgerLookup = Callable[[int], Counts | None]
# Handlers whose writes commit with a ledger row in the same warehouse transaction.
LEDGERED = frozenset({Handler.SQL})
EXPIRY_OUTCOMES = {"LOST": "lost", "SUCCESS": "recovered"}  # WAITING is not settled yet


def warehouse_ledger(warehouse: Warehouse) -> LedgerLookup:
    """Read an attempt's row from the ledger of this warehouse."""

    def lookup(attempt_id: int) -> Counts | None:
        with connect(warehouse) as conn:
            return conn.publisher.applied(conn, attempt_id, warehouse.ledger_schema)

    return lookup


@dataclass(frozen=True)
class Settled:
    attempt_id: int
    outcome: str  # SUCCESS (from the ledger), LOST, or WAITING (another host's grace)
    message: str


@dataclass
class ReconcileReport:
    settled: list[Settled] = field(default_factory=list)

    @property
    def recovered(self) -> list[int]:
        return [item.attempt_id for item in self.settled if item.outcome == "SUCCESS"]

    @property
    def lost(self) -> list[int]:
        return [item.attempt_id for item in self.settled if item.outcome == "LOST"]


def reconcile(
    engine: EngineDB, ledger: LedgerLookup | None, lease_seconds: float, now: datetime | None = None
) -> ReconcileReport:
    report = ReconcileReport()
    with engine.read() as conn:
        expired = expired_attempts(conn)
    for attempt in expired:
        settled = _settle(engine, attempt, ledger, lease_seconds, now or utc_now())
        if settled is not None:
            log.warning("attempt %s: %s", settled.attempt_id, settled.message)
            report.settled.append(settled)
            if settled.outcome in EXPIRY_OUTCOMES:
                LEASE_EXPIRIES.labels(EXPIRY_OUTCOMES[settled.outcome]).inc()
    return report


def _settle(
    engine: EngineDB,
    attempt: ExpiredAttempt,
    ledger: LedgerLookup | None,
    lease_seconds: float,
    now: datetime,
) -> Settled | None:
    if attempt.owner_id == owner_id():
        return None  # ours and alive: a late heartbeat of this very process renews it
    owner = parse_owner(attempt.owner_id)
    if owner is not None and alive_here(owner) is None:
        grace = attempt.lease_expires_at + timedelta(seconds=2 * lease_seconds)
        if now < grace:
            return Settled(
                attempt.attempt_id, "WAITING", f"owner on {owner.host} has until {grace}"
            )
    _stop_orphan(attempt)
    stopped = attempt.lease_expires_at.isoformat(timespec="seconds")
    counts = ledger(attempt.attempt_id) if ledger and attempt.handler in LEDGERED else None
    try:
        with engine.transaction(SYSTEM) as conn:
            if counts is not None:
                message = (
                    f"outcome recovered from the warehouse ledger after owner {attempt.owner_id} "
                    f"stopped renewing its lease at {stopped}"
                )
                recover_attempt(conn, attempt.attempt_id, SYSTEM, counts=counts, message=message)
                return Settled(attempt.attempt_id, "SUCCESS", message)
            message = (
                f"attempt {attempt.attempt_number} was lost: owner {attempt.owner_id} stopped "
                f"renewing its lease at {stopped}"
            )
            lose_attempt(conn, attempt.attempt_id, SYSTEM, message=message)
            return Settled(attempt.attempt_id, "LOST", message)
    except StaleTransitionError:
        return None  # its owner came back and settled it first


def _stop_orphan(attempt: ExpiredAttempt) -> None:
    """A task process still running here has no owner to enforce its limits: stop it first."""
    if attempt.pid is None or attempt.host is None or attempt.process_start is None:
        return
    child = ProcessIdentity(attempt.host, attempt.pid, attempt.process_start)
    if alive_here(child):
        log.warning(
            "stopping orphaned task process %s of attempt %s", child.pid, attempt.attempt_id
        )
        stop_group(child.pid, grace_seconds=5.0)
