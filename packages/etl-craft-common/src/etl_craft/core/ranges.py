"""The range of every number a user gives etl-craft: CLI options, settings, specs, parameters.

Each kind of number is one Range here, and every reader (argparse, craft-connector.yml, the
spec schema, task parameters) refuses a value outside it with the same message, so a number
too large for a column or a timer never reaches one.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Range:
    what: str  # what the number is, for messages: "a TCP port", "a row count"
    minimum: int | float
    maximum: int | float
    fraction: bool = False  # a decimal number is accepted, not only a whole one

    @property
    def expectation(self) -> str:
        kind = "a number" if self.fraction else "a whole number"
        return f"expected {self.what}: {kind} from {self.minimum} to {self.maximum}"

    def problem(self, value: object) -> str | None:
        """What is wrong with ``value`` (already a number), or None when it is in range."""
        fault = self._fault(value)
        return None if fault is None else f"{value!r} {fault}; {self.expectation}"

    def parse(self, text: str) -> int | float:
        """The number ``text`` writes, in range; ValueError naming the value and the range."""
        try:
            value: int | float = float(text) if self.fraction else int(text.strip())
        except ValueError:
            raise ValueError(f"{text!r} is not a number; {self.expectation}") from None
        fault = self._fault(value)
        if fault is not None:
            raise ValueError(f"{text.strip()} {fault}; {self.expectation}")
        return value

    def _fault(self, value: object) -> str | None:
        # YAML and JSON read `true` as a bool, which Python counts as an int; it is no number.
        number_types = (int, float) if self.fraction else (int,)
        if isinstance(value, bool) or not isinstance(value, number_types):
            return "is not a number"
        if not self.minimum <= value <= self.maximum:
            return "is out of range"
        return None

    def argument(self) -> RangeArgument:
        """An argparse ``type=``: a refused value is a usage error, never a traceback."""
        return RangeArgument(self)


@dataclass(frozen=True)
class RangeArgument:
    allowed: Range

    def __call__(self, text: str) -> int | float:
        try:
            return self.allowed.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None


# Ids are BIGINT in the Engine DB.
ID_MAX = 2**63 - 1
DAY_SECONDS = 86_400

ID = Range("an id", 1, ID_MAX)
PORT = Range("a TCP port", 1, 65_535)
LISTEN_PORT = Range("a TCP port, or 0 for none", 0, 65_535)
ROW_LIMIT = Range("a row count", 1, 1_000_000)
ROWS_WRITTEN = Range("a row count", 0, ID_MAX)
DEPTH = Range("a number of hops", 1, 1_000)
SLOTS = Range("a number of slots", 0, 10_000)
PARALLEL_TASKS = Range("a number of tasks at once", 1, 10_000)
CONNECTIONS = Range("a number of queries at once", 1, 10_000)
POOL_CONNECTIONS = Range("a number of connections", 1, 1_000)
RETRIES = Range("a number of retries", 0, 1_000)
RUNS = Range("a number of runs", 1, 100_000)
TASKS = Range("a number of tasks", 1, 10_000)
WAVE = Range("a wave number", 1, 1_000)
PRIORITY = Range("a priority", -1_000_000, 1_000_000)
SECONDS = Range("a number of seconds", 0, 7 * DAY_SECONDS)
TIMEOUT_SECONDS = Range("a number of seconds", 1, 7 * DAY_SECONDS)
HEARTBEAT_SECONDS = Range("a number of seconds", 0.1, 3_600, fraction=True)
DRAIN_SECONDS = Range("a number of seconds", 0, DAY_SECONDS, fraction=True)
MINUTES = Range("a number of minutes", 0, 7 * 24 * 60)
SLA_MINUTES = Range("a number of minutes", 1, 7 * 24 * 60)
POLL_SECONDS = Range("a number of seconds", 0.01, 3_600, fraction=True)
CONNECT_TIMEOUT_SECONDS = Range("a number of seconds", 2, 3_600)
STATEMENT_TIMEOUT_SECONDS = Range(
    "a number of seconds, or 0 for none", 0, DAY_SECONDS, fraction=True
)
GIVE_UP_SECONDS = Range("a number of seconds, or 0 for never", 0, 7 * DAY_SECONDS, fraction=True)
BACKOFF = Range("a backoff factor", 1, 100, fraction=True)
BODY_BYTES = Range("a number of bytes", 1, 2**31 - 1)
RETENTION_DAYS = Range("a number of days", 1, 36_500)
PURGE_BATCH_ROWS = Range("a number of rows per transaction", 1, 100_000)
LOG_TAIL_BYTES = Range("a number of bytes", 256, 1024 * 1024)
EVERY_MINUTES = Range("a number of minutes", 1, 7 * 24 * 60)
INTEGER_PARAMETER = Range("an INT parameter", -(2**63), 2**63 - 1)

# The ranges by name, as the spec schema's "range" keyword names them.
BY_NAME = MappingProxyType(
    {
        name.lower(): value
        for name, value in dict(globals()).items()
        if isinstance(value, Range) and name.isupper()
    }
)
