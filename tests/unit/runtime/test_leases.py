"""When an owner that cannot renew its leases stops its attempts: only when it is cut off from
the Engine DB, and only as a lease, as last renewed, is about to end; never because the Engine
DB answered slowly or busy."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import psycopg
import pytest

from etl_craft.runtime.leases import MARGIN_SHARE, LeaseWatch, fence_after, silence_after


def refused() -> psycopg.OperationalError:
    """A real connection refused: a port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    try:
        psycopg.connect(f"postgresql://nobody@127.0.0.1:{port}/none", connect_timeout=2)
    except psycopg.OperationalError as error:
        return error
    raise AssertionError("connected to a port nothing listens on")


def locked(tmp_path: Path) -> sqlite3.OperationalError:
    """A real SQLite "database is locked": another connection holds the write lock."""
    path = tmp_path / "engine.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE IF NOT EXISTS t (x)")
    holder.execute("BEGIN IMMEDIATE")
    try:
        sqlite3.connect(path, timeout=0, isolation_level=None).execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        return error
    finally:
        holder.close()
    raise AssertionError("took a write lock another connection holds")


@pytest.mark.parametrize(("lease", "fence"), [(3, 2.4), (8, 6.4), (60, 48.0), (600, 480.0)])
def test_the_margin_before_a_lease_ends_is_a_share_of_it(lease: float, fence: float) -> None:
    assert fence_after(lease) == pytest.approx(fence)
    assert lease - fence_after(lease) == pytest.approx(lease * MARGIN_SHARE)


def test_an_owner_cut_off_fences_what_it_could_not_renew_before_the_lease_ends() -> None:
    watch = LeaseWatch(lease_seconds=10)  # fenced 8 s after a lease began
    for attempt_id in (1, 2, 3):
        watch.claimed(attempt_id, at=100.0)
    watch.renewed([1], at=104.0)
    watch.refused(3)
    watch.failed(refused(), at=105.0)
    assert watch.cut_off()
    assert watch.seconds_to_fence(now=106.0) == 0.0  # the refusal: stop it now
    due = watch.due(now=108.5)
    assert (due.refused, due.expiring) == ((3,), (2,))
    watch.forget(2)
    watch.forget(3)
    assert watch.seconds_to_fence(now=108.5) == pytest.approx(3.5)
    assert watch.due(now=112.0).expiring == (1,)
    watch.renewed([4], at=112.0)  # never claimed here: not tracked
    assert watch.due(now=200.0).expiring == ()  # a renewal reached it: not cut off any more


def test_an_engine_db_that_answers_busy_never_gets_a_healthy_attempt_fenced(
    tmp_path: Path,
) -> None:
    # A renewal waiting on SQLite's write lock, or refused as locked, under load: the Engine
    # DB is there, and so is the reconciler; the owner keeps its task process.
    watch = LeaseWatch(lease_seconds=3)
    watch.claimed(1, at=100.0)
    watch.failed(locked(tmp_path), at=101.0)
    assert not watch.cut_off()
    assert watch.due(now=160.0).expiring == ()
    # Past the fence time it looks again soon, should the answers stop.
    assert watch.seconds_to_fence(now=160.0) == pytest.approx(0.3)
    watch.failed(refused(), at=160.0)
    assert watch.due(now=160.0).expiring == (1,)
    watch.failed(locked(tmp_path), at=161.0)  # it answers again: the cut-off is over
    assert watch.due(now=161.0).expiring == ()


def test_a_renewal_in_flight_counts_for_nothing_until_it_fails() -> None:
    watch = LeaseWatch(lease_seconds=3)
    watch.claimed(1, at=100.0)
    # No renewal answered or failed yet: however late, a slow one is not a cut-off.
    assert watch.due(now=150.0).expiring == ()


def test_a_renewal_unanswered_past_the_silence_time_counts_as_a_cut_off_from_when_it_was_sent() -> (
    None
):
    watch = LeaseWatch(lease_seconds=10, silence_seconds=silence_after(10, "postgresql"))
    watch.claimed(1, at=100.0)
    watch.sending(102.0)  # never answered: no reset, no error
    assert not watch.cut_off(now=104.0)
    assert watch.due(now=104.0).expiring == ()
    assert watch.cut_off(now=104.5)
    assert watch.due(now=107.9).expiring == ()  # not before the fence time
    assert watch.due(now=108.0).expiring == (1,)
    # The loop that waits looks again when the renewal turns silent, not a whole recheck later.
    assert watch.seconds_to_fence(now=108.0) == 0.0


def test_an_answer_ends_the_silence_and_a_local_sqlite_file_never_goes_silent() -> None:
    watch = LeaseWatch(lease_seconds=10, silence_seconds=silence_after(10, "postgresql"))
    watch.claimed(1, at=100.0)
    watch.sending(102.0)
    watch.renewed([1], at=102.0)
    assert not watch.cut_off(now=109.0)
    local = LeaseWatch(lease_seconds=10, silence_seconds=silence_after(10, "sqlite"))
    local.claimed(1, at=100.0)
    local.sending(102.0)  # a renewal waiting on SQLite's write lock: an answer will come
    assert not local.cut_off(now=130.0)
    assert local.due(now=130.0).expiring == ()


def test_a_renewal_not_even_sent_long_after_it_was_due_counts_as_a_cut_off() -> None:
    """A worker renews from its own loop: stuck on another statement gone silent, it sends
    nothing at all."""
    watch = LeaseWatch(10, silence_after(10, "postgresql"), heartbeat_seconds=2)
    watch.claimed(1, at=100.0)
    watch.renewed([1], at=101.0)  # the next one is due at 103, and silent from 105.5
    assert not watch.cut_off(now=105.4)
    assert watch.cut_off(now=105.5)
    assert watch.due(now=109.0).expiring == (1,)
    unknown = LeaseWatch(10, silence_after(10, "postgresql"))  # renewed by a thread of its own
    unknown.claimed(1, at=100.0)
    assert not unknown.cut_off(now=130.0)
