"""One run in the foreground: `etl-craft run` drives its run with a local pool of its own.

It holds the run's lease while it works (supervision.runs), so a second caller is refused
naming it, and renews it with the leases of its attempts from a heartbeat thread.

Asked to stop by a signal (runtime/stopping), it starts nothing more, gives its running task
processes ``shutdown_grace_seconds`` to finish, stops the rest and records them FAILED, queues
their next attempt, and releases its lease: the next `etl-craft run` continues the run.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import NoReturn

from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import SYSTEM, Actor
from etl_craft.core.enums import AttemptStatus, SlotKind
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.runs import RunRow, read_run, read_task_runs
from etl_craft.enginedb.transitions import queue_attempt
from etl_craft.pools.local import LocalPool
from etl_craft.runtime.reconcile import LedgerLookup
from etl_craft.runtime.stopping import SignalStop, StopRequest, active
from etl_craft.scheduling.driver import Step
from etl_craft.scheduling.gatekeeper import Bypass
from etl_craft.supervision.runs import RunSupervisor

IDLE_WAIT_SECONDS = 0.2  # nothing of ours runs: look again soon for retries and gates
log = logging.getLogger(__name__)


class ForegroundSupervisor:
    def __init__(
        self,
        engine: EngineDB,
        settings: OwnerSettings,
        requested_by: Actor,
        ledger: LedgerLookup | None = None,
        bypass: Bypass | None = None,  # run --ignore-dependencies: outcomes don't matter
    ) -> None:
        self.engine, self.settings, self.requested_by = engine, settings, requested_by
        self.ledger, self.bypass = ledger, bypass

    def supervise(
        self,
        run_id: int,
        only: frozenset[int] | None = None,
        taken: Callable[[], None] | None = None,  # told once its heartbeat holds the run
    ) -> RunRow:
        """Run ``run_id`` to its end, or only the tasks in ``only`` (run --task)."""
        stop = active()  # a stop signal is acted on in the loop, between transactions
        with self.engine.read() as conn:
            limit = read_run(conn, run_id).max_parallel_tasks
        limit = limit or self.settings.default_parallel_tasks
        pool = LocalPool(
            self.engine,
            self.settings,
            # The pipeline's limit is kept when attempts are queued; the slots only bound this host.
            {SlotKind.INGESTION: limit, SlotKind.WAREHOUSE: limit},
            self.ledger,
        )
        runs = RunSupervisor(self.engine, self.settings, pool, self.requested_by)
        if not runs.take(run_id, self.bypass, only):
            raise runs.refusal(run_id)
        last: RunRow | None = None
        try:
            with runs.heartbeat():
                if taken is not None:
                    taken()
                last = self._loop(runs, run_id, pool, stop)
                return last
        finally:
            pool.stop("the supervising etl-craft process stopped")
            runs.let_go(run_id, last)

    def _loop(
        self, runs: RunSupervisor, run_id: int, pool: LocalPool, stop: StopRequest | None
    ) -> RunRow:
        wake = () if stop is None else (stop.fileno(),)
        while True:
            if stop is not None and stop.signum is not None:
                self._stop(runs, run_id, pool, stop)
            step, run = runs.step(run_id)
            if step in (Step.ENDED, Step.PAUSED, Step.DONE):
                # Children that recorded their outcome are exiting: reap them before returning.
                while pool.running:
                    pool.wait(self.settings.poll_seconds)
                    pool.poll()
                return run
            if step is Step.APPLIED:
                continue
            wait = self.settings.poll_seconds if pool.running else IDLE_WAIT_SECONDS
            pool.wait(min(wait, self.settings.poll_seconds), wake)
            pool.poll()

    def _stop(
        self, runs: RunSupervisor, run_id: int, pool: LocalPool, stop: StopRequest
    ) -> NoReturn:
        """Start nothing more; give the running task processes their grace (a second signal
        cuts it short), stop what still runs, record it FAILED and queue its next attempt."""
        assert stop.signum is not None
        name = stop.signum.name
        if pool.live() and not stop.urgent:
            log.warning(
                "%s: run %s starts nothing more; its running task processes have %gs to finish "
                "(Orchestration shutdown_grace_seconds); a second signal stops them now",
                name,
                run_id,
                self.settings.shutdown_grace_seconds,
            )
        runs.grace(stop)
        stopped = set(pool.running)
        with self.engine.read() as conn:
            pipeline_code = read_run(conn, run_id).pipeline_code
        pool.release(
            f"stopped by signal {name}: the foreground etl-craft run (pid {os.getpid()}) was "
            f"asked to stop; etl-craft run --pipeline {pipeline_code} --run {run_id} "
            "continues the run"
        )
        self._requeue(runs, run_id, stopped)
        raise SignalStop(stop.signum)

    def _requeue(self, runs: RunSupervisor, run_id: int, stopped: set[int]) -> None:
        """Queue the next attempt of each task run stopped here: a stop is the operator's
        doing, so the task runs again when the run continues, whatever its RETRIES say."""
        if not stopped:
            return
        shape = runs.drivers[run_id].shape
        with self.engine.transaction(SYSTEM) as conn:
            run = read_run(conn, run_id)
            for task_id, task_run in read_task_runs(conn, run_id).items():
                if task_run.attempt_id not in stopped:
                    continue
                if task_run.attempt_status is not AttemptStatus.FAILED:
                    continue  # the task process recorded its own outcome as it stopped
                settings = shape.tasks[task_id]
                queue_attempt(
                    conn,
                    task_run.task_run_id,
                    SYSTEM,
                    slot_kind=settings.slot_kind,
                    pool=settings.pool or run.default_pool,
                    priority=run.priority,
                )
