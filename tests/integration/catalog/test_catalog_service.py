"""The catalog-builder service: builds on start and at each tick of its schedule, read from an
injected clock (no sleeping), and keeps serving the previous release when a rebuild fails."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from prometheus_client import REGISTRY

from etl_craft_catalog.releases import publish
from etl_craft_catalog.service import CatalogService
from tests.integration.catalog.site import request, serving, write_site

START = datetime(2026, 12, 1, 9, 7, tzinfo=UTC)


class FakeTime:
    """A clock that a wait moves forward, stopping the service after ``ticks`` waits."""

    def __init__(self, ticks: int) -> None:
        self.now = START
        self.waits: list[float] = []
        self.ticks = ticks

    def clock(self) -> datetime:
        return self.now

    def wait(self, seconds: float) -> bool:
        if len(self.waits) == self.ticks:
            return True
        self.waits.append(seconds)
        self.now += timedelta(seconds=seconds)
        return False


def _failures() -> float:
    found = REGISTRY.get_sample_value("etl_craft_catalog_builds_total", {"outcome": "failure"})
    return found or 0.0


def test_it_builds_on_start_and_at_every_tick_of_the_schedule(tmp_path: Path) -> None:
    time = FakeTime(ticks=3)
    built: list[datetime] = []
    service = CatalogService(
        lambda: built.append(time.now), "*/15 * * * *", "UTC", clock=time.clock, wait=time.wait
    )

    service.run()

    assert built == [START, *(START + timedelta(minutes=m) for m in (8, 23, 38))]
    assert time.waits == [480.0, 900.0, 900.0]


def test_a_failing_rebuild_keeps_the_previous_release_served(tmp_path: Path) -> None:
    site = tmp_path / "site"
    versions = iter(["1", "broken", "3"])

    def rebuild() -> None:
        version = next(versions)

        def write(folder: Path) -> None:
            write_site(folder, version)
            if version == "broken":
                raise RuntimeError("the Engine DB went away mid-build")

        publish(site, write)

    time = FakeTime(ticks=1)
    service = CatalogService(rebuild, "@hourly", "Europe/Paris", clock=time.clock, wait=time.wait)
    failures = _failures()

    with serving(site) as port:
        service.run()  # the build on start, then the failing one at the tick
        served = request(port, "GET", "/tables/orders.html")
        assert _failures() == failures + 1
        assert (served.status, served.body) == (200, b"<html>orders v1</html>")
        assert service.build_once() is True
        assert request(port, "GET", "/tables/orders.html").body == b"<html>orders v3</html>"
    assert len(list((tmp_path / ".site.releases").iterdir())) == 2
