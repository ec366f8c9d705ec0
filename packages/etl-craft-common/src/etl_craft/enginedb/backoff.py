"""How long a loop waits before it tries the Engine DB again after losing it."""

from __future__ import annotations

import random

FIRST_SECONDS = 0.25
MOST_SECONDS = 5.0  # a restarted Engine DB is found again within this of its return
# Doublings past this are beyond any cap (2**30 quarter seconds): a long outage counts on,
# the exponent does not, so a float never overflows.
MOST_DOUBLINGS = 30


class Backoff:
    """Doubling waits from FIRST_SECONDS up to ``most`` with jitter, so that many processes
    that lost the Engine DB together don't all come back in the same instant; reset once it
    answers again."""

    def __init__(self, most: float = MOST_SECONDS) -> None:
        self.most = most
        self.failures = 0

    def failed(self) -> float:
        """One more failure; the seconds to wait before the next try."""
        self.failures += 1
        doublings = min(self.failures - 1, MOST_DOUBLINGS)
        ceiling = min(self.most, FIRST_SECONDS * 2.0**doublings)
        return random.uniform(ceiling / 2, ceiling)  # noqa: S311 - jitter, not a secret

    def succeeded(self) -> bool:
        """Reset; True when there had been failures (the Engine DB is back)."""
        was_failing, self.failures = self.failures > 0, 0
        return was_failing
