"""A stopped task process stops its warehouse statement too, not only itself.

The owner stops an attempt (a cancel, a timeout, a lost lease) with SIGTERM, then SIGKILL after a
grace. A Python signal handler runs only between bytecodes, so while the main thread waits inside
a driver for a long statement, the handler waits too, the grace runs out, and the statement runs
on in the warehouse after the process is gone. Python's C-level handler still writes the signal
number to the wake-up descriptor at once; a thread reading it interrupts the running statements,
which returns the main thread to Python, where the handler ends the attempt.
"""

from __future__ import annotations

import logging
import os
import signal
import threading

from etl_craft.warehouse.connection import interrupt_running

log = logging.getLogger("etl_craft.task")


def interrupt_statements_on(signum: signal.Signals) -> None:
    """From the main thread, after the handler for ``signum`` is installed."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # the C handler must never block on a full pipe
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    threading.Thread(
        target=_watch, args=(read_end, signum), name="etl-craft-statement-cancel", daemon=True
    ).start()


def _watch(read_end: int, signum: signal.Signals) -> None:
    while True:
        received = os.read(read_end, 64)
        if not received:
            return
        if signum in received:
            for done in interrupt_running():
                log.warning("stopping: %s", done)
