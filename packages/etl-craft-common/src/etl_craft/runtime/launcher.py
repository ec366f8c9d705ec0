"""Starting an attempt's task process and settling what it leaves behind.

The owner starts the task process in a session of its own, with its output going to the
attempt log: forked by its fork server or a fresh interpreter (runtime/starter). It starts the
child inside its claim transaction, hands it the invocation it read there, records it RUNNING
with the child's pid in the same transaction, and lets the child begin its task once that
committed. The child hands its outcome back for the owner to record (runtime/handover); the
owner records one of its own only when the child could not: it died, it ran out of time, or
it was cancelled.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from opentelemetry.trace import Span

from etl_craft.config.owner import OwnerSettings
from etl_craft.core.actor import Actor
from etl_craft.core.enums import AttemptStatus
from etl_craft.core.errors import EngineDBError, ExitCode, StaleTransitionError
from etl_craft.core.faults import fault_point
from etl_craft.enginedb.attempts import AttemptInvocation, encode_invocation
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.offsets import finish_with_offset
from etl_craft.enginedb.transitions import (
    AttemptOutcome,
    cancel_owned_attempt,
    finish_attempt,
    start_attempt,
    time_out_attempt,
)
from etl_craft.runtime.handover import (
    OUTCOME_PATH_VARIABLE,
    HandedOutcome,
    hand_over,
    outcome_path,
    take_outcome,
)
from etl_craft.runtime.identity import HOST, process_start
from etl_craft.runtime.logfile import attempt_log_path, tail
from etl_craft.runtime.processes import stop_group
from etl_craft.runtime.reconcile import LedgerLookup
from etl_craft.runtime.starter import TaskProcess, start_task
from etl_craft.runtime.tracing import TRACEPARENT, carrier, start_span

STOP_GRACE_SECONDS = 5.0
INVOCATION_VARIABLE = "ETL_CRAFT_INVOCATION"
# Far below the kernel's limit on one environment string (128 KiB); a larger invocation (long
# parameter values) is read by the child from the Engine DB instead.
INVOCATION_LIMIT = 64 * 1024
log = logging.getLogger(__name__)


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


def settle_exit(
    engine: EngineDB, running: RunningAttempt, actor: Actor, ledger: LedgerLookup | None
) -> AttemptOutcome | None:
    """After the child exited: record the outcome it handed over (the usual end); nothing when
    it recorded one itself; else the ledger's outcome, else FAILED. The outcome recorded from
    the child's hand-over, if that is what happened; None otherwise."""
    with _settling(running, "exited"):
        path = outcome_path(running.spec.log_path)
        handed = take_outcome(path)
        if handed is not None:
            try:
                return _record_handed(engine, running, actor, handed)
            except EngineDBError:
                hand_over(path, handed)  # for the next try, once the Engine DB answers
                raise
        with engine.read() as conn:
            found = conn.one("attempt_status", attempt_id=running.attempt_id)
        if found is None or AttemptStatus(found["status"]).terminal:
            return None
        _settle_exit(engine, running, actor, ledger)
        return None


def _record_handed(
    engine: EngineDB, running: RunningAttempt, actor: Actor, handed: HandedOutcome
) -> AttemptOutcome | None:
    outcome = replace(handed.outcome, task_log=tail(running.spec.log_path))
    try:
        with engine.transaction(actor) as conn:
            finish_with_offset(
                conn,
                running.attempt_id,
                actor,
                owner_id=running.spec.owner_id,
                outcome=outcome,
                task_id=handed.task_id,
                offset=handed.offset,
            )
    except StaleTransitionError as refused:
        # Settled by someone else meanwhile (this owner was declared gone): it changes nothing.
        log.error(
            "attempt %s: the task's outcome was not recorded: %s", running.attempt_id, refused
        )
        return None
    return outcome


def _settle_exit(
    engine: EngineDB, running: RunningAttempt, actor: Actor, ledger: LedgerLookup | None
) -> None:
    code = running.process.returncode
    committed = ledger(running.attempt_id) if ledger is not None else None
    if committed is not None:
        message = (
            f"outcome recovered from the warehouse ledger: the task process (pid "
            f"{running.process.pid}) committed its writes, then exited with code {code} "
            "before recording them"
        )
        outcome = AttemptOutcome(
            AttemptStatus.SUCCESS,
            committed,
            error_message=message,
            task_log=tail(running.spec.log_path),
            exit_code=code,
            retryable=False,
            source="LEDGER",
        )
        _record(engine, running, actor, outcome)
        return
    message = (
        f"the task process (pid {running.process.pid}) exited with code {code} without "
        f"recording an outcome; see the attempt log {running.spec.log_path}"
    )
    _finish_for_child(engine, running, actor, message, code)


def stop_for_timeout(engine: EngineDB, running: RunningAttempt, actor: Actor) -> None:
    with _settling(running, "timed_out"):
        _stop_for_timeout(engine, running, actor)


def _stop_for_timeout(engine: EngineDB, running: RunningAttempt, actor: Actor) -> None:
    limit = running.spec.timeout_seconds
    stop_group(running.process.pid, STOP_GRACE_SECONDS)
    running.process.wait()
    message = f"the task ran longer than TASK_TIMEOUT_SECONDS={limit:g} and was stopped"
    try:
        with engine.transaction(actor) as conn:
            time_out_attempt(
                conn,
                running.attempt_id,
                actor,
                owner_id=running.spec.owner_id,
                error_message=message,
                task_log=tail(running.spec.log_path),
                exit_code=int(ExitCode.TIMEOUT),
            )
    except StaleTransitionError:
        # Still CLAIMED (the child never started) or already settled by the child.
        _finish_for_child(engine, running, actor, message, int(ExitCode.TIMEOUT))


def stop_for_cancel(engine: EngineDB, running: RunningAttempt, actor: Actor, reason: str) -> None:
    with _settling(running, "cancelled"):
        stop_group(running.process.pid, STOP_GRACE_SECONDS)
        running.process.wait()
        try:
            with engine.transaction(actor) as conn:
                cancel_owned_attempt(
                    conn, running.attempt_id, actor, owner_id=running.spec.owner_id, message=reason
                )
        except StaleTransitionError:
            pass  # the child recorded its outcome before it stopped


def stop_for_drain(engine: EngineDB, running: RunningAttempt, actor: Actor, reason: str) -> None:
    """Its owner is going away: stop the child and record FAILED, retryable, with ``reason``."""
    with _settling(running, "stopped"):
        stop_group(running.process.pid, STOP_GRACE_SECONDS)
        running.process.wait()
        _finish_for_child(engine, running, actor, reason, running.process.returncode)


def stop_unowned(running: RunningAttempt) -> None:
    """Kill the task process of an attempt that is no longer this owner's (recorded LOST,
    claimed by another owner, or about to lose its lease): at once, without the grace, so it
    publishes nothing more. Nothing is recorded here."""
    with _settling(running, "unowned"):
        stop_group(running.process.pid, 0)
        running.process.wait()


def record_stopped(engine: EngineDB, running: RunningAttempt, actor: Actor, message: str) -> None:
    """Record FAILED, retryable, for a task process this owner stopped (stop_unowned); a
    refusal means the attempt was settled meanwhile (the reconciler recorded it LOST, say),
    and that record stands."""
    _finish_for_child(engine, running, actor, message, running.process.returncode)


@contextmanager
def _settling(running: RunningAttempt, how: str) -> Iterator[None]:
    """End the owner's span of the attempt, whatever happens while it is settled, and leave
    no handed-over outcome behind (one stopped in the act of ending loses it). Unless the
    Engine DB failed: then nothing was recorded, the owner settles the attempt again once it
    can, and the outcome its task process handed over waits for it."""
    try:
        yield
    except EngineDBError:
        raise
    except BaseException:
        _settled(running, how)
        raise
    _settled(running, how)


def _settled(running: RunningAttempt, how: str) -> None:
    outcome_path(running.spec.log_path).unlink(missing_ok=True)
    code = running.process.returncode
    running.span.set_attribute("etl_craft.settled", how)
    if code is not None:
        running.span.set_attribute("etl_craft.exit_code", code)
    running.span.end()


def _finish_for_child(
    engine: EngineDB, running: RunningAttempt, actor: Actor, message: str, code: int | None
) -> None:
    outcome = AttemptOutcome(
        AttemptStatus.FAILED,
        error_message=message,
        task_log=tail(running.spec.log_path),
        exit_code=code,
        retryable=True,
        source="OWNER",
    )
    _record(engine, running, actor, outcome)


def _record(
    engine: EngineDB, running: RunningAttempt, actor: Actor, outcome: AttemptOutcome
) -> None:
    try:
        with engine.transaction(actor) as conn:
            finish_attempt(
                conn, running.attempt_id, actor, owner_id=running.spec.owner_id, outcome=outcome
            )
    except StaleTransitionError:
        pass  # the child recorded its own outcome, which stands
