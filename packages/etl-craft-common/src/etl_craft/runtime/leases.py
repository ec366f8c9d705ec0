"""What an owner knows of its attempt leases: when each last began, which renewals were refused,
and whether the Engine DB is out of reach.

An owner cut off from the Engine DB must stop its attempts itself before their leases run
out: once one expires, the reconciler may record the attempt LOST and a retry may start, and a
task process still running here would publish behind its back. Only a cut-off counts: an
Engine DB that answers (busy, a write lock waited on, a slow or cancelled statement) is there,
the reconciler works against that same database, and an owner that fenced then would stop
healthy attempts under load. So an attempt is fenced when its lease, as last renewed, is about
to end and every renewal tried since the Engine DB last answered failed to reach it.

The heartbeat reports renewals, refusals and failures here; the loop that runs the task
processes asks which attempts it must stop. The two may be different threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from etl_craft.enginedb.reach import unreachable

# Share of the lease kept between self-fencing and the lease's end: time to kill the task
# process and for the Engine DB's clock to run a little ahead. A share, not a fixed time, so
# that a short lease (the tests' 3 s) is not mostly margin and a long one has room.
MARGIN_SHARE = 0.2
# How often an owner looks again at a lease past its fence time while the Engine DB answers
# (slowly): should the answers stop, it must not sleep through the lease's end.
MOST_RECHECK_SECONDS = 1.0


def fence_after(lease_seconds: float) -> float:
    """Seconds after a lease began at which an owner cut off from the Engine DB stops it."""
    return lease_seconds * (1 - MARGIN_SHARE)


@dataclass(frozen=True)
class Due:
    """Attempts an owner must stop at once: refused (another owner or an end has them now),
    and expiring (the Engine DB out of reach, their leases about to end)."""

    refused: tuple[int, ...] = ()
    expiring: tuple[int, ...] = ()


class LeaseWatch:
    def __init__(self, lease_seconds: float) -> None:
        self.lease_seconds = lease_seconds
        self.fence_seconds = fence_after(lease_seconds)
        self.recheck_seconds = min(MOST_RECHECK_SECONDS, lease_seconds * MARGIN_SHARE / 2)
        self._lock = threading.Lock()
        self._renewed: dict[int, float] = {}  # attempt -> monotonic time its lease last began
        self._refused: set[int] = set()
        # Since when every renewal failed to reach the Engine DB; None while it answers.
        self._cut_since: float | None = None

    def claimed(self, attempt_id: int, at: float) -> None:
        """The claim granted a lease; ``at`` is a time taken before the claim was sent."""
        with self._lock:
            self._renewed[attempt_id] = at

    def renewed(self, attempt_ids: Iterable[int], at: float) -> None:
        """A renewal sent after ``at`` succeeded for these attempts."""
        with self._lock:
            self._cut_since = None
            for attempt_id in attempt_ids:
                if attempt_id in self._renewed:
                    self._renewed[attempt_id] = max(self._renewed[attempt_id], at)

    def failed(self, error: BaseException, at: float | None = None) -> None:
        """A renewal sent at ``at`` failed with ``error``: a cut-off, or an answer."""
        with self._lock:
            if not unreachable(error):
                self._cut_since = None  # it answered: it is there, however slow or busy
            elif self._cut_since is None:
                self._cut_since = time.monotonic() if at is None else at

    def cut_off(self) -> bool:
        with self._lock:
            return self._cut_since is not None

    def refused(self, attempt_id: int) -> None:
        with self._lock:
            if attempt_id in self._renewed:
                self._refused.add(attempt_id)

    def forget(self, attempt_id: int) -> None:
        with self._lock:
            self._renewed.pop(attempt_id, None)
            self._refused.discard(attempt_id)

    def renewed_ago(self, attempt_id: int, now: float | None = None) -> float:
        with self._lock:
            return (now or time.monotonic()) - self._renewed.get(attempt_id, 0.0)

    def due(self, now: float | None = None) -> Due:
        now = now or time.monotonic()
        with self._lock:
            expiring = [
                attempt_id
                for attempt_id, renewed in self._renewed.items()
                if attempt_id not in self._refused
                and self._cut_since is not None
                and now - renewed >= self.fence_seconds
            ]
            return Due(tuple(sorted(self._refused)), tuple(sorted(expiring)))

    def seconds_to_fence(self, now: float | None = None) -> float | None:
        """How long the owner's loop may wait before it must ask ``due`` again; None with no
        attempt held."""
        now = now or time.monotonic()
        with self._lock:
            waits = [
                self._wait(attempt_id, renewed, now)
                for attempt_id, renewed in self._renewed.items()
            ]
            return min(waits) if waits else None

    def _wait(self, attempt_id: int, renewed: float, now: float) -> float:
        if attempt_id in self._refused:
            return 0.0
        left = renewed + self.fence_seconds - now
        if left > 0:
            return left
        return 0.0 if self._cut_since is not None else self.recheck_seconds
