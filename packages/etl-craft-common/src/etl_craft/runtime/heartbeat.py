"""The owner's heartbeat: renews the leases of its runs and of its live attempts."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from etl_craft.core.actor import Actor
from etl_craft.core.errors import EngineDBError, StaleTransitionError
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.transitions import renew_attempt_lease, renew_run_lease
from etl_craft.runtime.leases import LeaseWatch

log = logging.getLogger(__name__)


class Heartbeat:
    """A daemon thread renewing leases every ``interval`` seconds until stopped."""

    def __init__(
        self,
        engine: EngineDB,
        actor: Actor,
        owner_id: str,
        lease_seconds: float,
        interval: float,
        runs: Callable[[], Iterable[int]],
        attempts: Callable[[], Iterable[int]],
        also: Callable[[EngineConnection], None] | None = None,  # e.g. the overseer's own row
        watch: LeaseWatch | None = None,  # told of renewals and refusals, to stop what it lost
    ) -> None:
        self.engine, self.actor, self.owner_id = engine, actor, owner_id
        self.lease_seconds, self.interval = lease_seconds, interval
        self.runs, self.attempts, self.also, self.watch = runs, attempts, also, watch
        self.lost: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="etl-craft-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Renew nothing more (another heartbeat has taken these leases over)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def beat(self) -> None:
        """Renew every lease once; a refused renewal means someone else owns the row now."""
        sent = time.monotonic()  # each lease renewed now runs from a moment after this one
        renewed: list[int] = []
        if self.watch is not None:
            self.watch.sending(sent)
        with self.engine.transaction(self.actor) as conn:
            if self.watch is not None:
                self.watch.limit_renewal(conn)
            if self.also is not None:
                self.also(conn)
            for run_id in self.runs():
                try:
                    renew_run_lease(
                        conn,
                        run_id,
                        self.actor,
                        owner_id=self.owner_id,
                        lease_seconds=self.lease_seconds,
                    )
                except StaleTransitionError as refused:
                    self._lost(f"run {run_id}", refused)
            for attempt_id in self.attempts():
                try:
                    renew_attempt_lease(
                        conn,
                        attempt_id,
                        self.actor,
                        owner_id=self.owner_id,
                        lease_seconds=self.lease_seconds,
                    )
                    renewed.append(attempt_id)
                except StaleTransitionError as refused:
                    self._lost(f"attempt {attempt_id}", refused)
                    if self.watch is not None:
                        self.watch.refused(attempt_id)
        if self.watch is not None:
            self.watch.renewed(renewed, sent)

    def _lost(self, what: str, refused: StaleTransitionError) -> None:
        self.lost.append(f"{what}: {refused}")
        log.warning("lease of %s not renewed: %s", what, refused)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.beat()
            except EngineDBError as error:
                # The lease still runs; the next beat retries before it expires. Should every
                # try fail to reach the Engine DB, the owner fences before it does (leases.py).
                if self.watch is not None:
                    self.watch.failed(error)
                log.warning("heartbeat failed, retrying in %ss: %s", self.interval, error)
