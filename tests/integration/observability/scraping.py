"""Reading a live process's /metrics: scrapes, and values by name and labels."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from tests.fixtures.waiting import wait_for


@dataclass(frozen=True)
class Scrape:
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float]

    def value(self, name: str, **labels: str) -> float | None:
        return self.samples.get((name, frozenset(labels.items())))

    def total(self, name: str, **labels: str) -> float:
        """The sum over every series of ``name`` whose labels include ``labels``."""
        wanted = set(labels.items())
        return sum(v for (n, found), v in self.samples.items() if n == name and wanted <= found)


def scrape(port: int) -> Scrape:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return Scrape(samples)


def serving(port: int) -> Scrape:
    """The first scrape of a process that has just started."""

    def answers() -> Scrape | None:
        try:
            return scrape(port)
        except OSError:
            return None

    return wait_for(answers, f"/metrics on port {port}")


def until(port: int, holds: Callable[[Scrape], bool], what: str, timeout: float = 60.0) -> Scrape:
    """Scrape until ``holds`` is true of the scrape; the scrape that made it true."""

    def check() -> Scrape | None:
        found = scrape(port)
        return found if holds(found) else None

    return wait_for(check, what, timeout)
