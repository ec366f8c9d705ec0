"""What an owner knows of its attempt leases: when each last began, which renewals were refused,
and whether the Engine DB is out of reach.

An owner cut off from the Engine DB must stop its attempts itself before their leases run
out: once one expires, the reconciler may record the attempt LOST and a retry may start, and a
task process still running here would publish behind its back. Only a cut-off counts: an
Engine DB that answers (busy, a write lock waited on, a slow or cancelled statement) is there,
the reconciler works against that same database, and an owner that fenced then would stop
healthy attempts under load. So an attempt is fenced when its lease, as last renewed, is about
to end and every renewal tried since the Engine DB last answered failed to reach it.

A cut-off is either told (every renewal tried since the Engine DB last answered failed to
reach it: refused, reset, timed out) or silent: a network that drops packets without a reset,
or a peer that stopped answering, leaves a renewal waiting with no error for as long as TCP
takes to give up. So a renewal still unanswered after ``silence_seconds`` counts as a cut-off
too, from when it was sent; and so does a renewal not even sent that long after it was due
(an owner whose own loop renews, a worker's, may be stuck on another statement gone silent).
An Engine DB that is there answers every renewal within that time,
if only with its statement timeout, which each renewal sets below it (PostgreSQL; a local
SQLite file can't go silent, and waits on its write lock are answers).

The heartbeat reports renewals, refusals and failures here; the loop that runs the task
processes asks which attempts it must stop. The two may be different threads, and either may be
stuck on a silent connection: ``LeaseGuard`` is a thread of its own that stops what must be
stopped, touching nothing but the task processes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.reach import unreachable
from etl_craft.runtime.identity import is_zombie, process_start
from etl_craft.runtime.processes import stop_group

log = logging.getLogger(__name__)

# Share of the lease kept between self-fencing and the lease's end: time to kill the task
# process and for the Engine DB's clock to run a little ahead. A share, not a fixed time, so
# that a short lease (the tests' 3 s) is not mostly margin and a long one has room.
MARGIN_SHARE = 0.2
# How often an owner looks again at a lease past its fence time while the Engine DB answers
# (slowly): should the answers stop, it must not sleep through the lease's end.
MOST_RECHECK_SECONDS = 1.0
# Share of the lease a renewal may go unanswered before the Engine DB counts as cut off
# (PostgreSQL). With the heartbeat at most half the lease, a renewal due then and unanswered
# is noticed before the fence time (0.8 of the lease) has come.
SILENCE_SHARE = 0.25
# ... but never less than this: a busy host answers a renewal late now and then.
LEAST_SILENCE_SECONDS = 1.0
# Share of the silence time a renewal's own statement may run on the server before it is
# cancelled: an Engine DB that is there answers, if only with that timeout, well within it.
RENEWAL_STATEMENT_SHARE = 0.5


def silence_after(lease_seconds: float, dialect: str) -> float | None:
    """Seconds an unanswered renewal takes to count as a cut-off; None where the Engine DB
    can't go silent (a local SQLite file)."""
    if dialect != "postgresql":
        return None
    return max(LEAST_SILENCE_SECONDS, lease_seconds * SILENCE_SHARE)


def fence_after(lease_seconds: float) -> float:
    """Seconds after a lease began at which an owner cut off from the Engine DB stops it."""
    return lease_seconds * (1 - MARGIN_SHARE)


@dataclass(frozen=True)
class Due:
    """Attempts an owner must stop at once: refused (another owner or an end has them now),
    and expiring (the Engine DB out of reach, their leases about to end)."""

    refused: tuple[int, ...] = ()
    expiring: tuple[int, ...] = ()


@dataclass(frozen=True)
class Stopped:
    """An attempt whose task process was stopped because its lease was about to run out."""

    attempt_id: int
    renewed_ago: float  # seconds since its lease last began, when it was stopped
    lease_seconds: float

    def message(self, owner: str) -> str:
        left = self.lease_seconds - self.renewed_ago
        when = (
            f"{left:.1f}s before the lease ran out"
            if left > 0
            else f"{-left:.1f}s after the lease had run out"
        )
        return (
            f"{owner} could not renew the attempt's lease for {self.renewed_ago:.1f}s (the lease "
            f"lasts {self.lease_seconds:g}s; the Engine DB did not answer), so it stopped the "
            f"task process {when}; it may be retried"
        )


class LeaseWatch:
    def __init__(
        self,
        lease_seconds: float,
        silence_seconds: float | None = None,
        heartbeat_seconds: float | None = None,  # how often renewals are due, when known
    ) -> None:
        self.lease_seconds = lease_seconds
        self.silence_seconds, self.heartbeat_seconds = silence_seconds, heartbeat_seconds
        self.fence_seconds = fence_after(lease_seconds)
        self.recheck_seconds = min(MOST_RECHECK_SECONDS, lease_seconds * MARGIN_SHARE / 2)
        self._lock = threading.Lock()
        self._renewed: dict[int, float] = {}  # attempt -> monotonic time its lease last began
        self._refused: set[int] = set()
        # Since when every renewal failed to reach the Engine DB; None while it answers.
        self._cut_since: float | None = None
        self._sending: float | None = None  # when the renewal still unanswered was sent
        self._answered: float | None = None  # when the last claim or renewal was sent
        self._groups: dict[int, int] = {}  # attempt -> its task process group
        self._stopped: dict[int, Stopped] = {}  # stopped here, not yet taken by the owner

    def claimed(self, attempt_id: int, at: float, group: int | None = None) -> None:
        """The claim granted a lease; ``at`` is a time taken before the claim was sent, and
        ``group`` the process group of the attempt's task process."""
        with self._lock:
            self._renewed[attempt_id] = at
            self._answered = max(self._answered or at, at)
            if group is not None:
                self._groups[attempt_id] = group

    def sending(self, at: float) -> None:
        """A renewal is sent at ``at``; until it is answered (``renewed`` or ``failed``), its
        wait counts toward silence."""
        with self._lock:
            if self._sending is None:
                self._sending = at

    def limit_renewal(self, conn: EngineConnection) -> None:
        """Limit the renewal's statements well inside the silence time, so that an Engine DB
        that is there answers before its silence would count as a cut-off."""
        if self.silence_seconds is not None:
            conn.limit_statements(self.silence_seconds * RENEWAL_STATEMENT_SHARE)

    def renewed(self, attempt_ids: Iterable[int], at: float) -> None:
        """A renewal sent after ``at`` succeeded for these attempts."""
        with self._lock:
            self._cut_since = self._sending = None
            self._answered = max(self._answered or at, at)
            for attempt_id in attempt_ids:
                if attempt_id in self._renewed:
                    self._renewed[attempt_id] = max(self._renewed[attempt_id], at)

    def failed(self, error: BaseException, at: float | None = None) -> None:
        """A renewal sent at ``at`` failed with ``error``: a cut-off, or an answer."""
        with self._lock:
            silent_since = self._sending
            self._sending = None
            if not unreachable(error):
                self._cut_since = None  # it answered: it is there, however slow or busy
                self._answered = time.monotonic() if at is None else at
            elif self._cut_since is None:
                sent = time.monotonic() if at is None else at
                self._cut_since = sent if silent_since is None else min(sent, silent_since)

    def cut_off(self, now: float | None = None) -> bool:
        with self._lock:
            return self._cut_at(now or time.monotonic()) is not None

    def _cut_at(self, now: float) -> float | None:
        """Since when the Engine DB is cut off: every renewal since failed to reach it, or one
        went unanswered past the silence time. Called with the lock held."""
        if self._cut_since is not None:
            return self._cut_since
        silence, sending = self.silence_seconds, self._sending
        if silence is None:
            return None
        if sending is not None and now - sending >= silence:
            return sending
        if self.heartbeat_seconds is not None and self._answered is not None:
            due = self._answered + self.heartbeat_seconds
            if now - due >= silence:
                return due  # not even sent: the owner's loop waits on something gone silent
        return None

    def refused(self, attempt_id: int) -> None:
        with self._lock:
            if attempt_id in self._renewed:
                self._refused.add(attempt_id)

    def forget(self, attempt_id: int) -> None:
        with self._lock:
            self._renewed.pop(attempt_id, None)
            self._refused.discard(attempt_id)
            self._groups.pop(attempt_id, None)
            self._stopped.pop(attempt_id, None)

    def stop_expiring(self, now: float | None = None) -> None:
        """Stop at once, each once, the task processes of the attempts due to be fenced (the
        Engine DB cut off, their leases about to end); ``take_stopped`` hands them over."""
        with self._lock:
            now = time.monotonic() if now is None else now
            for attempt_id in self._expiring(now):
                group = self._groups.pop(attempt_id, None)
                if group is None or not _running(group):
                    continue  # exited: the owner records what it handed over, once it can
                stop_group(group, 0)
                stopped = Stopped(attempt_id, now - self._renewed[attempt_id], self.lease_seconds)
                self._stopped[attempt_id] = stopped
                log.warning(
                    "attempt %s: the Engine DB is cut off and the lease ends in %.1fs, so its "
                    "task process was stopped",
                    attempt_id,
                    self.lease_seconds - stopped.renewed_ago,
                )

    def take_stopped(self) -> list[Stopped]:
        """The attempts ``stop_expiring`` stopped since the last call, forgotten here."""
        with self._lock:
            taken = list(self._stopped.values())
            for stopped in taken:
                self._renewed.pop(stopped.attempt_id, None)
            self._stopped.clear()
            return taken

    def renewed_ago(self, attempt_id: int, now: float | None = None) -> float:
        with self._lock:
            return (now or time.monotonic()) - self._renewed.get(attempt_id, 0.0)

    def due(self, now: float | None = None) -> Due:
        now = now or time.monotonic()
        with self._lock:
            return Due(tuple(sorted(self._refused)), tuple(self._expiring(now)))

    def _expiring(self, now: float) -> list[int]:
        if self._cut_at(now) is None:
            return []
        return sorted(
            attempt_id
            for attempt_id, renewed in self._renewed.items()
            if attempt_id not in self._refused
            and attempt_id not in self._stopped
            and now - renewed >= self.fence_seconds
        )

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
        if self._cut_at(now) is not None:
            return 0.0
        silence, sending = self.silence_seconds, self._sending
        if silence is not None and sending is not None:
            # A renewal in flight turns silent at a known time: look again then.
            return min(self.recheck_seconds, max(0.0, sending + silence - now))
        return self.recheck_seconds


def _running(pid: int) -> bool:
    return process_start(pid) is not None and not is_zombie(pid)


class LeaseGuard:
    """A daemon thread that stops the task processes whose leases are about to run out while
    the Engine DB is cut off, whatever the owner's own loop is doing: that loop may itself be
    waiting on a connection gone silent. It runs while the watch holds attempts; the owner
    takes what it stopped (``LeaseWatch.take_stopped``) and records it once the Engine DB
    answers."""

    def __init__(self, watch: LeaseWatch) -> None:
        self.watch = watch
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def ensure(self) -> None:
        """Make sure the thread runs: call after the watch was given an attempt."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="etl-craft-lease-guard", daemon=True
                )
                self._thread.start()

    def _loop(self) -> None:
        while True:
            wait = self.watch.seconds_to_fence()
            if wait is None:
                with self._lock:  # ensure() after a new attempt either sees this end or not
                    if self.watch.seconds_to_fence() is None:
                        self._thread = None
                        return
                continue
            # A refused attempt asks for a look at once: that is the owner's loop's to act on,
            # not this thread's, so it looks again only a little later.
            time.sleep(max(wait, 0.05))
            self.watch.stop_expiring()
