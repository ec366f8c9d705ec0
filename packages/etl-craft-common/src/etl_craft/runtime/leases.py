"""What an owner knows of its attempt leases: when each was last renewed, and which were refused.

An owner that cannot renew a lease (the Engine DB is unreachable, or its host is cut off) must
stop the attempt itself before the lease runs out: once it expires, the reconciler may record
the attempt LOST and a retry may start, and a task process still running here would publish
behind its back. The heartbeat reports renewals and refusals here; the loop that runs the task
processes asks which attempts it must stop. The two may be different threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

# Time kept between self-fencing and the lease's end, whatever the heartbeat: enough to stop a
# task process and for clocks of owner and Engine DB to disagree a little.
MIN_MARGIN_SECONDS = 1.0


def fence_after(lease_seconds: float, heartbeat_seconds: float) -> float:
    """Seconds without a renewal after which an owner stops its attempt: three quarters of the
    lease, later when a heartbeat is longer than that (one renewal may then fail), and never
    later than MIN_MARGIN_SECONDS before the lease ends."""
    wanted = max(lease_seconds * 0.75, heartbeat_seconds + MIN_MARGIN_SECONDS)
    return max(min(wanted, lease_seconds - MIN_MARGIN_SECONDS), 0.0)


@dataclass(frozen=True)
class Due:
    """Attempts an owner must stop at once: refused (another owner or an end has them now),
    and expiring (not renewed for too long: fence them before their leases run out)."""

    refused: tuple[int, ...] = ()
    expiring: tuple[int, ...] = ()


class LeaseWatch:
    def __init__(self, lease_seconds: float, heartbeat_seconds: float) -> None:
        self.fence_seconds = fence_after(lease_seconds, heartbeat_seconds)
        self._lock = threading.Lock()
        self._renewed: dict[int, float] = {}  # attempt -> monotonic time its lease last began
        self._refused: set[int] = set()

    def claimed(self, attempt_id: int, at: float) -> None:
        """The claim granted a lease; ``at`` is a time taken before the claim was sent."""
        with self._lock:
            self._renewed[attempt_id] = at

    def renewed(self, attempt_ids: Iterable[int], at: float) -> None:
        """A renewal sent after ``at`` succeeded for these attempts."""
        with self._lock:
            for attempt_id in attempt_ids:
                if attempt_id in self._renewed:
                    self._renewed[attempt_id] = max(self._renewed[attempt_id], at)

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
                if attempt_id not in self._refused and now - renewed >= self.fence_seconds
            ]
            return Due(tuple(sorted(self._refused)), tuple(sorted(expiring)))

    def seconds_to_fence(self, now: float | None = None) -> float | None:
        """How long until the next attempt must be fenced; None with no attempt held."""
        now = now or time.monotonic()
        with self._lock:
            if not self._renewed:
                return None
            return max(0.0, min(self._renewed.values()) + self.fence_seconds - now)
