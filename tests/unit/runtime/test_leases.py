"""When an owner that cannot renew its leases stops its attempts: before the lease ends, and
never between two ordinary heartbeats."""

from __future__ import annotations

import pytest

from etl_craft.runtime.leases import MIN_MARGIN_SECONDS, LeaseWatch, fence_after


@pytest.mark.parametrize(
    ("lease", "heartbeat", "fence"),
    [(60, 15, 45.0), (60, 1, 45.0), (3, 1, 2.0), (60, 50, 51.0), (10, 9.5, 9.0)],
)
def test_an_owner_fences_before_its_lease_ends_and_after_a_heartbeat(
    lease: float, heartbeat: float, fence: float
) -> None:
    assert fence_after(lease, heartbeat) == pytest.approx(fence)
    assert fence_after(lease, heartbeat) <= lease - MIN_MARGIN_SECONDS


def test_a_renewal_or_a_refusal_decides_what_the_owner_must_stop() -> None:
    watch = LeaseWatch(lease_seconds=8, heartbeat_seconds=1)  # fences after 6 s
    watch.claimed(1, at=100.0)
    watch.claimed(2, at=100.0)
    watch.claimed(3, at=100.0)
    watch.renewed([1], at=104.0)
    watch.refused(3)
    assert watch.seconds_to_fence(now=105.0) == pytest.approx(1.0)
    due = watch.due(now=106.5)
    assert (due.refused, due.expiring) == ((3,), (2,))
    watch.forget(2)
    watch.forget(3)
    assert watch.due(now=106.5).expiring == ()
    assert watch.due(now=110.0).expiring == (1,)
    watch.renewed([4], at=110.0)  # never claimed here: not tracked
    assert watch.due(now=200.0).expiring == (1,)
