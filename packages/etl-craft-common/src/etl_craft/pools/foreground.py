"""An overseer for one run, in the foreground: `etl-craft run` drives its run with the local pool.

It holds the run's lease while it works, so a second caller is refused naming it, and renews
it with the leases of its attempts from a heartbeat thread. Everything it knows comes from the
tables, so a supervisor started after a crash picks up where the last one stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from etl_craft.core.actor import SYSTEM, Actor
from etl_craft.core.enums import SlotKind
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.runs import RunRow, read_run
from etl_craft.enginedb.transitions import claim_run_lease, release_run_lease
from etl_craft.pools.dispatch import submit_queued
from etl_craft.pools.local import LocalPool, LocalSettings
from etl_craft.runtime.heartbeat import Heartbeat
from etl_craft.runtime.identity import owner_id
from etl_craft.runtime.launcher import TaskSetup
from etl_craft.runtime.reconcile import LedgerLookup
from etl_craft.runtime.tracing import span
from etl_craft.scheduling.driver import DriverSettings, RunDriver, Step, supervised_elsewhere
from etl_craft.scheduling.gatekeeper import Bypass
from etl_craft.scheduling.gates import DEFAULT_WAIT_MINUTES

IDLE_WAIT_SECONDS = 0.2  # nothing of ours runs: look again soon for retries and gates


@dataclass(frozen=True)
class SupervisorSettings:
    engine_url: str
    config_path: Path | None
    profile: str | None
    logs_dir: Path
    default_retries: int = 0
    default_parallel_tasks: int = 4
    lease_seconds: float = 60.0
    heartbeat_seconds: float = 15.0
    poll_seconds: float = 1.0
    log_level: str = "INFO"
    gate_wait_minutes: float = DEFAULT_WAIT_MINUTES
    max_warehouse_queries: int | None = None

    @property
    def driver(self) -> DriverSettings:
        return DriverSettings(
            default_retries=self.default_retries,
            default_parallel_tasks=self.default_parallel_tasks,
            gate_wait_minutes=self.gate_wait_minutes,
            max_warehouse_queries=self.max_warehouse_queries,
        )


class RunSupervisor:
    def __init__(
        self,
        engine: EngineDB,
        settings: SupervisorSettings,
        requested_by: Actor,
        ledger: LedgerLookup | None = None,
        bypass: Bypass | None = None,  # run --ignore-dependencies: outcomes don't matter
    ) -> None:
        self.engine, self.settings, self.requested_by = engine, settings, requested_by
        self.ledger, self.bypass = ledger, bypass
        self.owner = owner_id()

    def supervise(self, run_id: int, only: frozenset[int] | None = None) -> RunRow:
        """Run ``run_id`` to its end, or only the tasks in ``only`` (run --task_code)."""
        try:
            with self.engine.transaction(SYSTEM) as conn:
                claim_run_lease(
                    conn,
                    run_id,
                    SYSTEM,
                    owner_id=self.owner,
                    lease_seconds=self.settings.lease_seconds,
                )
                run = read_run(conn, run_id)
        except StaleTransitionError:
            with self.engine.read() as conn:
                held = read_run(conn, run_id)
            raise supervised_elsewhere(held) from None
        limit = run.max_parallel_tasks or self.settings.default_parallel_tasks
        pool = LocalPool(
            self.engine,
            LocalSettings(
                owner_id=self.owner,
                tasks=TaskSetup(
                    engine_url=self.settings.engine_url,
                    config_path=self.settings.config_path,
                    profile=self.settings.profile,
                    logs_dir=self.settings.logs_dir,
                    log_level=self.settings.log_level,
                ),
                lease_seconds=self.settings.lease_seconds,
                heartbeat_seconds=self.settings.heartbeat_seconds,
            ),
            # The pipeline's limit is kept when attempts are queued; the slots only bound this host.
            {SlotKind.INGESTION: limit, SlotKind.WAREHOUSE: limit},
            self.ledger,
        )
        heartbeat = Heartbeat(
            self.engine,
            SYSTEM,
            self.owner,
            self.settings.lease_seconds,
            self.settings.heartbeat_seconds,
            lambda: (run_id,),
            pool.live,
            watch=pool.leases,
        )
        try:
            with heartbeat, span("etl_craft.run", {"etl_craft.run_id": run_id}) as traced:
                ended = self._loop(run_id, only, pool)
                traced.set_attributes(
                    {
                        "etl_craft.pipeline": ended.pipeline_code,
                        "etl_craft.project": ended.project_code,
                        "etl_craft.run.status": ended.status.value,
                    }
                )
                return ended
        finally:
            pool.stop("the supervising etl-craft process stopped")
            with self.engine.transaction(SYSTEM) as conn:
                if read_run(conn, run_id).owner_id == self.owner:
                    release_run_lease(conn, run_id, SYSTEM, owner_id=self.owner)

    def _loop(self, run_id: int, only: frozenset[int] | None, pool: LocalPool) -> RunRow:
        driver = RunDriver(
            self.engine, run_id, self.settings.driver, self.requested_by, self.bypass, only
        )
        while True:
            step, run = driver.step()
            if step in (Step.ENDED, Step.PAUSED, Step.DONE):
                # Children that recorded their outcome are exiting: reap them before returning.
                while pool.running:
                    pool.wait(self.settings.poll_seconds)
                    pool.poll()
                return run
            if step in (Step.APPLIED, Step.BUSY):
                submit_queued(self.engine, pool, run, driver.shape)
            if step is Step.APPLIED:
                continue
            wait = self.settings.poll_seconds if pool.running else IDLE_WAIT_SECONDS
            pool.wait(min(wait, self.settings.poll_seconds))
            pool.poll()
