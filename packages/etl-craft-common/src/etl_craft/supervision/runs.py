"""The run supervisor: the runs one owner drives, under their leases.

Both owners that drive runs use it: the overseer for every live run it may hold, the
foreground `etl-craft run` for its one run. It takes a run's lease before it drives the run
and keeps it renewed from the owner's heartbeat, steps the run's driver and hands the
attempts the step queued to the owner's pool, spans the time it drove the run, and releases
the lease when it lets go. Everything it knows comes from the tables, so a supervisor started
after a crash picks up where the last one stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import SYSTEM, Actor
from etl_craft.core.errors import RunStateError, StaleTransitionError
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.runs import RunRow, read_run
from etl_craft.enginedb.transitions import claim_run_lease, release_run_lease
from etl_craft.pools.base import Pool
from etl_craft.pools.dispatch import submit_queued
from etl_craft.runtime.heartbeat import Heartbeat
from etl_craft.runtime.stopping import StopRequest
from etl_craft.runtime.tracing import Attributes, RunSpans
from etl_craft.scheduling.driver import RunDriver, Step, supervised_elsewhere
from etl_craft.scheduling.gatekeeper import Bypass


class RunSupervisor:
    def __init__(
        self, engine: EngineDB, settings: OwnerSettings, pool: Pool, requested_by: Actor
    ) -> None:
        self.engine, self.settings, self.pool = engine, settings, pool
        self.requested_by = requested_by  # who the runs' alerts and skips are recorded for
        self.drivers: dict[int, RunDriver] = {}
        # What the heartbeat thread renews: replaced whole, never changed in place under it.
        self.held: tuple[int, ...] = ()
        self.spans = RunSpans()

    def heartbeat(self, also: Callable[[EngineConnection], None] | None = None) -> Heartbeat:
        """The owner's heartbeat: renews the leases of the runs held here and of the pool's
        live attempts (and runs ``also`` in the same transaction)."""
        return Heartbeat(
            self.engine,
            SYSTEM,
            self.settings.owner_id,
            self.settings.lease_seconds,
            self.settings.heartbeat_seconds,
            lambda: self.held,
            self.pool.live,
            also,
            watch=self.pool.leases,
        )

    def take(
        self, run_id: int, bypass: Bypass | None = None, only: frozenset[int] | None = None
    ) -> bool:
        """Claim the run's lease and build its driver; False when another owner holds it.

        A run whose metadata cannot be read into a plan (MetadataError) is let go again."""
        if run_id in self.drivers:
            return True
        try:
            with self.engine.transaction(SYSTEM) as conn:
                claim_run_lease(
                    conn,
                    run_id,
                    SYSTEM,
                    owner_id=self.settings.owner_id,
                    lease_seconds=self.settings.lease_seconds,
                )
        except StaleTransitionError:
            return False
        try:
            driver = RunDriver(self.engine, run_id, self.settings, self.requested_by, bypass, only)
        except BaseException:
            self._release(run_id)
            raise
        self.drivers[run_id] = driver
        self.held = tuple(self.drivers)
        self.spans.begin(run_id)
        return True

    def refusal(self, run_id: int) -> RunStateError:
        """Why a run this supervisor could not take is not its to drive."""
        with self.engine.read() as conn:
            return supervised_elsewhere(read_run(conn, run_id))

    def step(self, run_id: int) -> tuple[Step, RunRow]:
        """One look at a run held here; the attempts it queued are handed to the pool."""
        driver = self.drivers[run_id]
        with self.spans.current(run_id):  # attempts started now are the run span's children
            step, run = driver.step()
            if step in (Step.APPLIED, Step.BUSY):
                submit_queued(self.engine, self.pool, run, driver.shape)
        return step, run

    def let_go(self, run_id: int, last: RunRow | None = None) -> None:
        """Stop driving the run and release its lease; ``last`` is the run as this supervisor
        last saw it (its span records the status), None when it lets go before the end."""
        if self.drivers.pop(run_id, None) is None:
            return
        self.held = tuple(self.drivers)
        self.spans.end(run_id, {"etl_craft.run.released": True} if last is None else outcome(last))
        self._release(run_id)

    def grace(self, stop: StopRequest | None = None) -> None:
        """Give the pool's live attempts the shutdown grace to finish; the second signal of
        ``stop`` cuts it short."""
        deadline = time.monotonic() + self.settings.shutdown_grace_seconds
        wake = () if stop is None else (stop.fileno(),)
        while self.pool.live() and not (stop is not None and stop.urgent):
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.pool.wait(min(left, self.settings.poll_seconds), wake)
            if stop is not None:
                stop.drain()
            self.pool.poll()

    def _release(self, run_id: int) -> None:
        with self.engine.transaction(SYSTEM) as conn:
            if read_run(conn, run_id).owner_id == self.settings.owner_id:
                release_run_lease(conn, run_id, SYSTEM, owner_id=self.settings.owner_id)


def outcome(run: RunRow) -> Attributes:
    """What a run's span records of the run as its supervisor last saw it."""
    return {
        "etl_craft.pipeline": run.pipeline_code,
        "etl_craft.project": run.project_code,
        "etl_craft.run.status": run.status.value,
    }
