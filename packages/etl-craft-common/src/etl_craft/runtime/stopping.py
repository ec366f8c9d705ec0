"""SIGTERM, SIGINT and SIGHUP to a foreground owner: a stop request, then a clean exit.

While ``stop_on_signals`` is in force, a signal is only noted, and wakes the owner's waits
through ``fileno()``: the owner acts on it where it waits (``sleep``, the supervisor's loop),
between transactions, so that none is cut in half and it can give its task processes their
grace, record them and release its lease before it raises ``SignalStop``. A second signal asks
for the stop to happen now; a third raises ``SignalStop`` wherever the owner is.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from collections.abc import Iterator
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
INSISTED = 3  # signals after which the owner stops wherever it is


def signal_exit_code(signum: signal.Signals) -> int:
    """What a shell reports for a process ended by ``signum``: 128 + its number."""
    return 128 + int(signum)


class SignalStop(BaseException):
    """The owner was asked to stop by a signal. A BaseException, as KeyboardInterrupt is: no
    ``except Exception`` on the way out may swallow it."""

    def __init__(self, signum: signal.Signals) -> None:
        super().__init__(f"stopped by signal {signum.name}")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return signal_exit_code(self.signum)


class StopRequest:
    """The signals received while it is in force, and a descriptor they make readable."""

    def __init__(self) -> None:
        self.received: list[signal.Signals] = []
        self._read, self._write = os.pipe()
        for descriptor in (self._read, self._write):
            os.set_blocking(descriptor, False)

    @property
    def signum(self) -> signal.Signals | None:
        return self.received[0] if self.received else None

    @property
    def urgent(self) -> bool:
        """A second signal came: stop the task processes now, without their grace."""
        return len(self.received) > 1

    def fileno(self) -> int:
        return self._read

    def drain(self) -> None:
        """Read what the signals wrote, so that the next wait on ``fileno()`` blocks again."""
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 64):
                pass

    def raise_if_stopped(self) -> None:
        if self.signum is not None:
            raise SignalStop(self.signum)

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or until a signal comes: then raise ``SignalStop``."""
        select.select([self._read], [], [], seconds)
        self.drain()
        self.raise_if_stopped()

    def handle(self, signum: int, frame: FrameType | None) -> None:
        received = signal.Signals(signum)
        self.received.append(received)
        with contextlib.suppress(BlockingIOError):
            os.write(self._write, b"s")
        if len(self.received) >= INSISTED:
            raise SignalStop(received)

    def close(self) -> None:
        for descriptor in (self._read, self._write):
            os.close(descriptor)


_active: list[StopRequest] = []


def active() -> StopRequest | None:
    """The stop request in force in this process, if its command installed one."""
    return _active[-1] if _active else None


@contextlib.contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """Turn SIGTERM, SIGINT and SIGHUP into a stop request for as long as this is in force."""
    request = StopRequest()
    previous = {signum: signal.signal(signum, request.handle) for signum in STOP_SIGNALS}
    _active.append(request)
    try:
        yield request
    finally:
        _active.remove(request)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        request.close()
