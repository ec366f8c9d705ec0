"""Starting an attempt's task process.

The owner starts the task process in a session of its own, with its output going to the
attempt log: forked by its fork server or a fresh interpreter (runtime/starter). It starts the
child inside its claim transaction, hands it the invocation it read there, records it RUNNING
with the child's pid in the same transaction, and lets the child begin its task once that
committed. From then on the owner's AttemptOwner holds the child and settles it
(runtime/attempt_owner).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from opentelemetry.trace import Span

from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import Actor
from etl_craft.core.faults import fault_point
from etl_craft.enginedb.attempts import AttemptInvocation, encode_invocation
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.transitions import (
    start_attempt,
)
from etl_craft.runtime.handover import (
    OUTCOME_PATH_VARIABLE,
    outcome_path,
)
from etl_craft.runtime.identity import HOST, process_start
from etl_craft.runtime.logfile import attempt_log_path
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


def launch_spec(
    settings: OwnerSettings,
    owner_id: str,  # the owner's id now: a worker registered again has another one
    attempt_id: int,
    where: tuple[str, int, str, int],  # pipeline code, run id, task code, attempt number
    timeout_seconds: float | None,
) -> LaunchSpec:
    """What a task process of the owner starts with."""
    return LaunchSpec(
        attempt_id=attempt_id,
        owner_id=owner_id,
        engine_url=settings.engine_url,
        log_path=attempt_log_path(settings.logs_dir, *where),
        timeout_seconds=timeout_seconds,
        config=settings.config_path,
        profile=settings.profile,
        log_level=settings.log_level,
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
    """An owner's claim transaction, in which it may start a claimed attempt's task process."""

    conn: EngineConnection
    actor: Actor
    running: RunningAttempt | None = None

    def start(self, spec: LaunchSpec, invocation: AttemptInvocation) -> RunningAttempt:
        """Start the task process and record it RUNNING, with the process's identity, in the
        claim's transaction: the claim and the start become visible together."""
        assert self.running is None, "one task process per claim"
        self.running = _start(spec, invocation)
        fault_point("before_running")
        pid = self.running.process.pid
        start_attempt(
            self.conn,
            spec.attempt_id,
            self.actor,
            owner_id=spec.owner_id,
            host=HOST,
            pid=pid,
            process_start=process_start(pid) or "0",
            log_path=str(spec.log_path),
        )
        return self.running


@contextmanager
def claiming(engine: EngineDB, actor: Actor) -> Iterator[Claim]:
    """A claim transaction. A task process started in it begins its task once the transaction
    committed; should the transaction fail, or the owner die before the commit, the claim never
    happened and the process exits without its task."""
    claim: Claim | None = None
    try:
        with engine.transaction(actor) as conn:
            claim = Claim(conn, actor)
            yield claim
    except BaseException:
        if claim is not None and claim.running is not None:
            claim.running.process.release(go=False)
            claim.running.span.end()
        raise
    if claim.running is not None:
        fault_point("after_claim")  # committed: a death now leaves a process that never ran
        claim.running.process.release(go=True)


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
    encoded = encode_invocation(invocation)
    if len(encoded) <= INVOCATION_LIMIT:
        env[INVOCATION_VARIABLE] = encoded
    try:
        process = start_task(argv, env, spec.log_path)
    except BaseException:
        span.end()
        raise
    return RunningAttempt(spec, process, time.monotonic(), span)
