"""Where an attempt's warehouse time goes, split into the phases a user can act on."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum


class Phase(StrEnum):
    STAGE = "stage"  # the SELECT into its temporary table
    HASH = "hash"  # one row per key with its change hash; the rows that differ from the target
    CHECKS = "checks"  # everything that can refuse before the first write
    WRITE = "write"  # the statements that change the target
    BOOKKEEPING = "bookkeeping"  # fence, ledger, counts, scratch tables
    COMMIT = "commit"  # the warehouse making the transaction durable


class Phases:
    """A stopwatch per phase: time is charged to the phase entered last."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(Phase, 0.0)
        self._current = Phase.BOOKKEEPING
        self._since = time.perf_counter()

    @contextmanager
    def of(self, phase: Phase) -> Iterator[None]:
        previous = self.enter(phase)
        try:
            yield
        finally:
            self.enter(previous)

    def enter(self, phase: Phase) -> Phase:
        """Charge the time from here on to ``phase``; the phase it was charged to until now."""
        now = time.perf_counter()
        previous = self._current
        self.seconds[previous] += now - self._since
        self._current, self._since = phase, now
        return previous

    def stop(self) -> dict[str, float]:
        """Seconds per phase, by name, up to now."""
        self.enter(self._current)
        return {phase.value: seconds for phase, seconds in self.seconds.items()}

    def describe(self) -> str:
        return ", ".join(
            f"{phase} {seconds * 1000:.1f} ms" for phase, seconds in self.seconds.items()
        )
