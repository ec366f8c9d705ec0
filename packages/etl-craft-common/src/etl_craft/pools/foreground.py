"""An overseer for one run, in the foreground: `etl-craft run` drives its run with the local pool.

It holds the run's lease while it works, so a second caller is refused naming it, and renews
it with the leases of its attempts from a heartbeat thread. Everything it knows comes from the
tables, so a supervisor started after a crash picks up where the last one stopped.

Asked to stop by a signal (runtime/stopping), it starts nothing more, gives its running task
processes ``shutdown_grace_seconds`` to finish, stops the rest and records them FAILED, queues
their next attempt, and releases its lease: the next `etl-craft run` continues the run.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from etl_craft.config.rules import GatePolicy
from etl_craft.core.actor import SYSTEM, Actor
from etl_craft.core.enums import AttemptStatus, SlotKind
from etl_craft.core.errors import StaleTransitionError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.runs import RunRow, read_run, read_task_runs
from etl_craft.enginedb.transitions import claim_run_lease, queue_attempt, release_run_lease
from etl_craft.pools.dispatch import submit_queued
from etl_craft.pools.local import LocalPool, LocalSettings
from etl_craft.runtime.heartbeat import Heartbeat
from etl_craft.runtime.identity import owner_id
from etl_craft.runtime.launcher import TaskSetup
from etl_craft.runtime.reconcile import LedgerLookup
from etl_craft.runtime.stopping import SignalStop, StopRequest, active
from etl_craft.runtime.tracing import span
from etl_craft.scheduling.driver import DriverSettings, RunDriver, Step, supervised_elsewhere
from etl_craft.scheduling.gatekeeper import Bypass
from etl_craft.scheduling.gates import DEFAULT_WAIT_MINUTES

IDLE_WAIT_SECONDS = 0.2  # nothing of ours runs: look again soon for retries and gates
log = logging.getLogger(__name__)


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
    shutdown_grace_seconds: float = 60.0  # after a stop signal, before task processes stop
    dependency_gates: GatePolicy = GatePolicy.ENFORCE

    @property
    def driver(self) -> DriverSettings:
        return DriverSettings(
            default_retries=self.default_retries,
            default_parallel_tasks=self.default_parallel_tasks,
            gate_wait_minutes=self.gate_wait_minutes,
            max_warehouse_queries=self.max_warehouse_queries,
            dependency_gates=self.dependency_gates,
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
        stop = active()  # a stop signal is acted on in the loop, between transactions
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
                ended = self._loop(run_id, only, pool, stop)
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

    def _loop(
        self,
        run_id: int,
        only: frozenset[int] | None,
        pool: LocalPool,
        stop: StopRequest | None,
    ) -> RunRow:
        driver = RunDriver(
            self.engine, run_id, self.settings.driver, self.requested_by, self.bypass, only
        )
        wake = () if stop is None else (stop.fileno(),)
        while True:
            if stop is not None and stop.signum is not None:
                self._stop(run_id, pool, driver, stop)
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
            pool.wait(min(wait, self.settings.poll_seconds), wake)
            pool.poll()

    def _stop(self, run_id: int, pool: LocalPool, driver: RunDriver, stop: StopRequest) -> NoReturn:
        """Start nothing more; give the running task processes their grace (a second signal
        cuts it short), stop what still runs, record it FAILED and queue its next attempt."""
        assert stop.signum is not None
        name = stop.signum.name
        deadline = time.monotonic() + self.settings.shutdown_grace_seconds
        if pool.live() and not stop.urgent:
            log.warning(
                "%s: run %s starts nothing more; its running task processes have %gs to finish "
                "(Orchestration shutdown_grace_seconds); a second signal stops them now",
                name,
                run_id,
                self.settings.shutdown_grace_seconds,
            )
        while pool.live() and not stop.urgent and (left := deadline - time.monotonic()) > 0:
            pool.wait(min(left, self.settings.poll_seconds), (stop.fileno(),))
            stop.drain()
            pool.poll()
        stopped = set(pool.running)
        with self.engine.read() as conn:
            pipeline_code = read_run(conn, run_id).pipeline_code
        pool.release(
            f"stopped by signal {name}: the foreground etl-craft run (pid {os.getpid()}) was "
            f"asked to stop; etl-craft run --pipeline_code {pipeline_code} --run-id {run_id} "
            "continues the run"
        )
        self._requeue(run_id, driver, stopped)
        raise SignalStop(stop.signum)

    def _requeue(self, run_id: int, driver: RunDriver, stopped: set[int]) -> None:
        """Queue the next attempt of each task run stopped here: a stop is the operator's
        doing, so the task runs again when the run continues, whatever its RETRIES say."""
        if not stopped:
            return
        with self.engine.transaction(SYSTEM) as conn:
            run = read_run(conn, run_id)
            for task_id, task_run in read_task_runs(conn, run_id).items():
                if task_run.attempt_id not in stopped:
                    continue
                if task_run.attempt_status is not AttemptStatus.FAILED:
                    continue  # the task process recorded its own outcome as it stopped
                settings = driver.shape.tasks[task_id]
                queue_attempt(
                    conn,
                    task_run.task_run_id,
                    SYSTEM,
                    slot_kind=settings.slot_kind,
                    pool=settings.pool or run.default_pool,
                    priority=run.priority,
                )
