"""SIGTERM and SIGINT as a stop request a service's loop waits on."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

log = logging.getLogger(__name__)


def stop_on_signals(what: str) -> threading.Event:
    stop = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        log.info("signal %s: %s finishes the requests in flight and stops", signum, what)
        stop.set()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    return stop
