"""How long a loop waits before it tries the Engine DB again after losing it, and how a
service that starts (or stands by) while the Engine DB is away waits for it."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from etl_craft.config.settings import ENV_PREFIX, load_settings
from etl_craft.core.errors import EngineDBError
from etl_craft.enginedb.reach import unreachable

T = TypeVar("T")
log = logging.getLogger(__name__)

FIRST_SECONDS = 0.25
# While the Engine DB stays away, one warning every this many tries (the first one included).
LOG_EVERY = 10
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


def until_reachable(
    call: Callable[[], T], *, what: str, stopping: threading.Event | None = None
) -> T | None:
    """``call`` once the Engine DB answers: a failure to reach it is tried again with backoff,
    with a warning every LOG_EVERY tries, until ETL_CRAFT_ENGINE_GIVE_UP_SECONDS (never by
    default); None when ``stopping`` is set first. An Engine DB that answered with an error (a
    wrong password, a missing schema) is a configuration to fix: that error is raised at once."""
    give_up = load_settings().engine_give_up_seconds
    began, backoff = time.monotonic(), Backoff()
    while stopping is None or not stopping.is_set():
        try:
            return call()
        except EngineDBError as error:
            if not unreachable(error):
                raise
            delay = backoff.failed()
            waited = time.monotonic() - began
            if give_up and waited + delay > give_up:
                raise EngineDBError(
                    f"{what} gave up after {backoff.failures} tries over {waited:.0f}s "
                    f"({ENV_PREFIX}ENGINE_GIVE_UP_SECONDS={give_up:g}): {error}"
                ) from error
            if backoff.failures % LOG_EVERY == 1:
                log.warning(
                    "%s waits for the Engine DB (try %s, %.0fs so far; retrying with backoff "
                    "up to %gs): %s",
                    what,
                    backoff.failures,
                    waited,
                    backoff.most,
                    error,
                )
            if stopping is None:
                time.sleep(delay)
            else:
                stopping.wait(delay)
    return None
