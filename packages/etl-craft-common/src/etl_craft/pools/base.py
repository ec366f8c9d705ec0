"""The Pool protocol: how the overseer and the foreground CLI hand attempts to whoever runs them.

A pool runs QUEUED attempts: the local provider on this host as child processes, the queue
provider through worker agents that claim from the Engine DB. Owners talk to a pool only
through this interface; everything a pool knows it can rebuild from the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from etl_craft.core.enums import AttemptStatus, Handler, SlotKind
from etl_craft.enginedb.attempts import attempt_status
from etl_craft.enginedb.connection import EngineDB
from etl_craft.runtime.leases import LeaseWatch


class HandleStatus(StrEnum):
    QUEUED = "QUEUED"  # waiting for a slot or a claim
    RUNNING = "RUNNING"  # claimed by an owner and, as far as it knows, running
    ENDED = "ENDED"  # settled: the attempt is terminal
    UNKNOWN = "UNKNOWN"  # the pool never saw it, or can't tell


def recorded_status(engine: EngineDB, attempt_id: int) -> HandleStatus:
    """What the Engine DB says of an attempt: QUEUED, ENDED, RUNNING (claimed or running by
    some owner), or UNKNOWN when there is no such attempt."""
    with engine.read() as conn:
        status = attempt_status(conn, attempt_id)
    if status is None:
        return HandleStatus.UNKNOWN
    if status.terminal:
        return HandleStatus.ENDED
    return HandleStatus.QUEUED if status is AttemptStatus.QUEUED else HandleStatus.RUNNING


@dataclass(frozen=True)
class AttemptSpec:
    attempt_id: int
    pipeline_run_id: int
    pipeline_code: str
    task_code: str
    attempt_number: int
    handler: Handler
    slot_kind: SlotKind
    timeout_seconds: float | None


@dataclass(frozen=True)
class Capacity:
    slots: Mapping[SlotKind, int]
    used: Mapping[SlotKind, int] = field(default_factory=dict)

    def free(self, kind: SlotKind) -> int:
        return max(0, self.slots.get(kind, 0) - self.used.get(kind, 0))


class Pool(Protocol):
    name: str
    # True when an attempt starts only once submitted (local); False when owners claim it
    # from the queue themselves, so queuing it was the submission.
    submits: bool

    @property
    def leases(self) -> LeaseWatch | None:
        """What the owner's heartbeat tells of lease renewals, so that the pool stops what it
        can no longer renew; None when the pool runs no attempt itself."""
        ...

    def capacity(self) -> Capacity:
        """Slots per kind and how many are in use."""
        ...

    def submit(self, spec: AttemptSpec) -> int:
        """Hand over a QUEUED attempt; idempotent per attempt id. The handle is the attempt id."""
        ...

    def status(self, handle: int) -> HandleStatus:
        """UNKNOWN for a handle this pool never saw, never an exception."""
        ...

    def cancel(self, handle: int, reason: str) -> None:
        """Stop the attempt, or ask its owner to; a settled one stays as it is."""
        ...

    def reconcile(self) -> dict[int, HandleStatus]:
        """What the pool can confirm of the attempts it holds, after a restart or lost contact."""
        ...

    def poll(self) -> None:
        """Settle what ended, ran out of time, or was asked to stop."""
        ...

    def wait(self, timeout: float, also: Sequence[int] = ()) -> None:
        """Until something the pool holds changes, a descriptor in ``also`` is readable, or
        ``timeout`` seconds."""
        ...

    def live(self) -> list[int]:
        """Attempts this process owns and whose leases it must renew."""
        ...

    def stop(self, reason: str) -> None:
        """Stop every attempt this process runs; they end CANCELLED."""
        ...

    def release(self, reason: str) -> None:
        """Stop every attempt this process runs because it goes away; they end FAILED and retry."""
        ...
