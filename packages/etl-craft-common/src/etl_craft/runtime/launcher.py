"""Starting an attempt's task process.

The owner starts the task process in a session of its own, with its output going to the
attempt log: forked by its fork server or a fresh interpreter (runtime/starter). It starts the
child inside its claim transaction, hands it the invocation it read there, records it RUNNING
with the child's pid in the same transaction, and lets the child begin its task once that
committed; a worker claims and starts several attempts in one such transaction. From then on
the owner's AttemptOwner holds the child and settles it (runtime/attempt_owner).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from opentelemetry.trace import Span

from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import Actor
from etl_craft.core.faults import fault_point
from etl_craft.enginedb.attempts import AttemptInvocation, encode_invocation
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.transitions import AttemptStart, start_attempts
from etl_craft.runtime.handover import DOORBELL_VARIABLE, OUTCOME_PATH_VARIABLE, outcome_path
from etl_craft.runtime.identity import HOST, process_start
from etl_craft.runtime.logfile import attempt_log_path, stored_log_key
from etl_craft.runtime.starter import TaskProcess, start_task
from etl_craft.runtime.tracing import TRACEPARENT, carrier, start_span

INVOCATION_VARIABLE = "ETL_CRAFT_INVOCATION"
# Far below the kernel's limit on one environment string (128 KiB); a larger invocation (long
# parameter values) is read by the child from the Engine DB instead.
INVOCATION_LIMIT = 64 * 1024


@dataclass(frozen=True)
class LaunchSpec:
    attempt_id: int
    owner_id: str
    engine_url: str
    log_path: Path
    timeout_seconds: float | None
    config: Path | None
    profile: str | None = None
    log_level: str = "INFO"
    extra_env: dict[str, str] = field(default_factory=dict)
    doorbell: str | None = None  # the owner's, rung once the outcome is handed over
    # Where the log is kept once the attempt ends (a Logs store); None: at log_path.
    log_location: str | None = None


def launch_spec(
    settings: OwnerSettings,
    owner_id: str,  # the owner's id now: a worker registered again has another one
    attempt_id: int,
    where: tuple[str, int, str, int],  # pipeline code, run id, task code, attempt number
    timeout_seconds: float | None,
) -> LaunchSpec:
    """What a task process of the owner starts with."""
    log_path = attempt_log_path(settings.logs_dir, *where)
    stored = settings.log_store
    return LaunchSpec(
        attempt_id=attempt_id,
        owner_id=owner_id,
        engine_url=settings.engine_url,
        log_path=log_path,
        timeout_seconds=timeout_seconds,
        config=settings.config_path,
        profile=settings.profile,
        log_level=settings.log_level,
        log_location=(
            None
            if stored is None
            else f"{stored.url}/{stored_log_key(settings.logs_dir, log_path)}"
        ),
    )


@dataclass
class RunningAttempt:
    spec: LaunchSpec
    process: TaskProcess
    started: float
    span: Span  # the owner's side of the attempt, ended when the owner settles it

    @property
    def attempt_id(self) -> int:
        return self.spec.attempt_id

    def exit_code(self) -> int | None:
        return self.process.poll()

    def overdue(self, now: float | None = None) -> bool:
        limit = self.spec.timeout_seconds
        return limit is not None and (now or time.monotonic()) - self.started > limit

    def seconds_left(self, now: float | None = None) -> float | None:
        limit = self.spec.timeout_seconds
        return (
            None if limit is None else max(0.0, limit - ((now or time.monotonic()) - self.started))
        )


@dataclass
class Claim:
    """An owner's claim transaction, in which it may start claimed attempts' task processes."""

    conn: EngineConnection
    actor: Actor
    running: list[RunningAttempt] = field(default_factory=list)

    def start(self, spec: LaunchSpec, invocation: AttemptInvocation) -> RunningAttempt:
        [running] = self.start_all([(spec, invocation)])
        return running

    def start_all(
        self, launches: Sequence[tuple[LaunchSpec, AttemptInvocation]]
    ) -> list[RunningAttempt]:
        """Start a task process for each claimed attempt and record them RUNNING, with their
        processes' identities, in one batch of the claim's transaction: the claims and the
        starts become visible together."""
        assert launches, "a claim starts at least one task process"
        started: list[tuple[RunningAttempt, AttemptInvocation]] = []
        for spec, invocation in launches:
            running = _start(spec, invocation)
            self.running.append(running)  # released (or not) with the transaction's end
            started.append((running, invocation))
        fault_point("before_running")
        start_attempts(
            self.conn,
            self.actor,
            [
                AttemptStart(
                    attempt_id=running.attempt_id,
                    task_run_id=invocation.task_run_id,
                    owner_id=running.spec.owner_id,
                    host=HOST,
                    pid=running.process.pid,
                    process_start=process_start(running.process.pid) or "0",
                    log_path=running.spec.log_location or str(running.spec.log_path),
                )
                for running, invocation in started
            ],
        )
        return [running for running, _ in started]


@contextmanager
def claiming(engine: EngineDB, actor: Actor) -> Iterator[Claim]:
    """A claim transaction. Task processes started in it begin their tasks once the transaction
    committed; should the transaction fail, or the owner die before the commit, the claims
    never happened and the processes exit without their tasks."""
    claim: Claim | None = None
    try:
        with engine.transaction(actor) as conn:
            claim = Claim(conn, actor)
            yield claim
    except BaseException:
        for running in claim.running if claim is not None else []:
            running.process.release(go=False)
            running.span.end()
        raise
    if claim.running:
        fault_point("after_claim")  # committed: a death now leaves processes that never ran
    for running in claim.running:
        running.process.release(go=True)


def _start(spec: LaunchSpec, invocation: AttemptInvocation) -> RunningAttempt:
    spec.log_path.parent.mkdir(parents=True, exist_ok=True)
    argv = [
        "--attempt-id",
        str(spec.attempt_id),
        "--owner-id",
        spec.owner_id,
        "--log-level",
        spec.log_level,
    ]
    if spec.config is not None:
        argv += ["--config", str(spec.config)]
    if spec.profile:
        argv += ["--profile", spec.profile]
    span = start_span(
        "etl_craft.attempt",
        {"etl_craft.attempt_id": spec.attempt_id, "etl_craft.owner_id": spec.owner_id},
    )
    # The task process's parent span is this one, or none: never a context this owner inherited.
    inherited = {key: value for key, value in os.environ.items() if key != TRACEPARENT}
    env = {
        **inherited,
        **spec.extra_env,
        **carrier(span),
        "PYTHONUNBUFFERED": "1",
        "ETL_CRAFT_ENGINE_URL": spec.engine_url,
        "ETL_CRAFT_LOG_PATH": str(spec.log_path),
        OUTCOME_PATH_VARIABLE: str(outcome_path(spec.log_path)),
    }
    if spec.doorbell is not None:
        env[DOORBELL_VARIABLE] = spec.doorbell
    encoded = encode_invocation(invocation)
    if len(encoded) <= INVOCATION_LIMIT:
        env[INVOCATION_VARIABLE] = encoded
    try:
        process = start_task(argv, env, spec.log_path)
    except BaseException:
        span.end()
        raise
    return RunningAttempt(spec, process, time.monotonic(), span)
