"""The task process: runs one attempt and records its outcome, fenced by attempt and owner.

Started by an owner (the foreground CLI, the overseer's local pool or a worker) in a session
of its own, with its output going to the attempt's log file. The owner claimed the attempt,
hands over its invocation and records it RUNNING, then releases the child, which runs the
task and hands its outcome back for the owner to record (runtime/handover), or records it
itself when the owner is gone.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType

from opentelemetry.trace import Span

from etl_craft.config.connector import DATA_ROOT_VARIABLE, Connector, load_connector
from etl_craft.config.project import Project
from etl_craft.config.settings import load_settings, resolve_engine_url
from etl_craft.config.urls import url_secrets
from etl_craft.core import ranges
from etl_craft.core.actor import Actor, ActorKind
from etl_craft.core.enums import AttemptStatus
from etl_craft.core.errors import EtlCraftError, ExitCode, StaleTransitionError
from etl_craft.core.faults import fault_point
from etl_craft.core.redaction import Redactor, clip
from etl_craft.enginedb.attempts import AttemptInvocation, decode_invocation, read_invocation
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.offsets import Offset, finish_with_offset
from etl_craft.enginedb.transitions import AttemptOutcome
from etl_craft.handlers.invocation import HandlerResult, Task, TaskEnvironment
from etl_craft.handlers.secrets import attempt_redactor
from etl_craft.handlers.task_kinds import run_handler
from etl_craft.runtime.context_logging import configure_task_logging
from etl_craft.runtime.handover import (
    DOORBELL_VARIABLE,
    OUTCOME_PATH_VARIABLE,
    HandedOutcome,
    hand_over,
    ring,
)
from etl_craft.runtime.identity import alive_here, parse_owner
from etl_craft.runtime.launcher import INVOCATION_VARIABLE
from etl_craft.runtime.logfile import tail
from etl_craft.runtime.masked_output import masked_output
from etl_craft.runtime.starter import GO, START_FD_VARIABLE
from etl_craft.runtime.statement_cancel import interrupt_statements_on
from etl_craft.runtime.tracing import TRACEPARENT, configure_tracing, flush_traces, span

LOG_PATH_VARIABLE = "ETL_CRAFT_LOG_PATH"
log = logging.getLogger("etl_craft.task")
LIVE = (AttemptStatus.CLAIMED, AttemptStatus.RUNNING)
ERROR_LIMIT = 2000  # characters of a failed attempt's ERROR_MESSAGE
_engines: dict[str, EngineDB] = {}  # by URL, prepared by the fork server before it forks
_configured: dict[Hashable, _Configured | None] = {}  # likewise, by _config_key
# Set by the owner for each attempt; the rest of a task process's environment is the owner's.
_PER_ATTEMPT = frozenset(
    {
        LOG_PATH_VARIABLE,
        INVOCATION_VARIABLE,
        OUTCOME_PATH_VARIABLE,
        START_FD_VARIABLE,
        TRACEPARENT,
        "PYTHONUNBUFFERED",
    }
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="etl-craft-task")
    parser.add_argument("--attempt-id", type=ranges.ID.argument(), required=True)
    parser.add_argument("--owner-id", required=True)
    parser.add_argument("--config", type=Path)
    parser.add_argument("--profile")
    parser.add_argument("--log-level", default="INFO")
    return parser


_PARSER = _parser()  # built once: in the fork server, before any child


def parse(argv: Sequence[str]) -> argparse.Namespace:
    return _PARSER.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _stop)
    interrupt_statements_on(signal.SIGTERM)
    code = run(args)
    _exit(code)


def run(args: argparse.Namespace) -> int:
    configured = _fresh(_config_key(args, os.environ)) or _configure(args, os.environ)
    connector, engine = configured.connector, _engine(configured.engine_url)
    actor = Actor(args.owner_id[:128], ActorKind.WORKER)
    # The owner's span (TRACEPARENT) is the parent; never the console exporter: stderr is the log.
    configure_tracing("etl-craft-task", inherit=True, console=False)
    with span("etl_craft.task", {"etl_craft.attempt_id": args.attempt_id}) as traced:
        return _attempt(args, connector, engine, actor, traced)


@dataclass(frozen=True)
class _Configured:
    connector: Connector | None
    engine_url: str


def _config_key(
    args: argparse.Namespace, environ: Mapping[str, str], cwd: Path | None = None
) -> Hashable:
    """What a task process's configuration is read from: its files as they are now (a changed
    file is read again), the profile, and the environment but for what differs per attempt."""
    files: list[tuple[str, int, int, int] | str] = []
    if args.config is not None:
        config = (cwd or Path.cwd()) / args.config
        data_root = environ.get(DATA_ROOT_VARIABLE)
        for path in (config, Project(Path(data_root) if data_root else config.parent).env_file):
            try:
                found = path.stat()
            except OSError:
                files.append(str(path))
                continue
            files.append((str(path), found.st_ino, found.st_mtime_ns, found.st_size))
    shared = sorted((key, value) for key, value in environ.items() if key not in _PER_ATTEMPT)
    return (tuple(files), args.profile, tuple(shared))


def _fresh(key: Hashable) -> _Configured | None:
    """The configuration prepared for ``key``, unless a secret it holds is older than the
    provider's cache time: a value rotated in the provider is then read again."""
    configured = _configured.get(key)
    if configured is None or configured.connector is None:
        return configured
    return None if configured.connector.secrets_expired() else configured


def _configure(args: argparse.Namespace, environ: Mapping[str, str]) -> _Configured:
    data_root = environ.get(DATA_ROOT_VARIABLE)
    connector = (
        load_connector(
            args.config,
            profile=args.profile,
            environ=environ,
            data_root=Path(data_root) if data_root else None,
        )
        if args.config
        else None
    )
    return _Configured(connector, resolve_engine_url(load_settings(), connector))


def prepare(argv: Sequence[str], environ: Mapping[str, str], cwd: str) -> None:
    """In the fork server, after forking a child: read the configuration the next children of
    this owner will have, and build the engine of its Engine DB, which learns the server's
    version and settings on one connection, closed at once (NullPool). A child finds both
    ready unless its files or environment changed since. Raises what reading them raises,
    once per configuration."""
    args = parse(argv)
    if args.config is not None and not (Path(cwd) / args.config).is_file():
        return  # not a plain file (a pipe, say): only the child reads it
    # The key first: a configuration prepared already costs two stats, not the environment
    # swapped for the children's and back, which each release would otherwise pay.
    key = _config_key(args, environ, Path(cwd))
    if key in _configured and (_configured[key] is None or _fresh(key)):
        return  # prepared, or found wrong once already: its children report why
    saved, here = dict(os.environ), Path.cwd()
    try:
        # Settings come from os.environ alone: take the children's for the moment.
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(cwd)
        _configured[key] = None
        configured = _configured[key] = _configure(args, environ)
        _prepare_engine(configured.engine_url)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        os.chdir(here)


def _prepare_engine(engine_url: str) -> None:
    if engine_url in _engines:
        return
    engine = EngineDB(engine_url, null_pool=True)
    if engine.dialect == "postgresql":
        with engine.read():
            pass
    _engines[engine_url] = engine


def _engine(engine_url: str) -> EngineDB:
    return _engines.get(engine_url) or EngineDB(engine_url, null_pool=True)


def _attempt(
    args: argparse.Namespace,
    connector: Connector | None,
    engine: EngineDB,
    actor: Actor,
    traced: Span,
) -> int:
    invocation = _invocation(engine, args.attempt_id, args.owner_id)
    if invocation is None:
        return int(ExitCode.STALE_TRANSITION)
    # Everything up to the task itself is done while the owner records RUNNING.
    traced.set_attributes(_span_attributes(invocation))
    redactor = attempt_redactor(connector, invocation, url_secrets(engine.url))
    logger = configure_task_logging(invocation, args.log_level, redactor)
    project = Project(args.config.parent) if args.config else None
    assert connector is not None, "a task process needs its project's craft-connector.yml"
    adapter = logging.LoggerAdapter(logger)
    log_path = os.environ.get(LOG_PATH_VARIABLE)
    environment = TaskEnvironment(
        connector, project, engine, adapter, actor, redactor, Path(log_path) if log_path else None
    )
    with masked_output(redactor):
        if not _released():
            return int(ExitCode.STALE_TRANSITION)
        fault_point("child_started")
        outcome, offset, code = _execute(Task(invocation, environment))
    fault_point("child_before_report")
    recorded = _masked(outcome, redactor)
    reported = _report(
        engine,
        invocation,
        args.owner_id,
        actor,
        recorded,
        (offset, code),
        connector.logs.tail_bytes,
    )
    fault_point("child_after_report")
    return reported


def _masked(outcome: AttemptOutcome, redactor: Redactor) -> AttemptOutcome:
    """The outcome as it may be recorded: its error masked before it is cut, so that the cut
    can never leave part of a secret showing."""
    if not outcome.error_message:
        return outcome
    return replace(outcome, error_message=clip(redactor(outcome.error_message), ERROR_LIMIT))


def _span_attributes(invocation: AttemptInvocation) -> dict[str, str | int]:
    return {
        "etl_craft.project": invocation.project_code,
        "etl_craft.pipeline": invocation.pipeline_code,
        "etl_craft.task": invocation.task_code,
        "etl_craft.run_id": invocation.pipeline_run_id,
        "etl_craft.task_run_id": invocation.task_run_id,
        "etl_craft.attempt": invocation.attempt_number,
    }


def _invocation(engine: EngineDB, attempt_id: int, owner_id: str) -> AttemptInvocation | None:
    """What to run: as the owner handed it over, else read (a very large one is not handed
    over). None when the attempt is no longer this owner's to run."""
    handed = os.environ.get(INVOCATION_VARIABLE)
    if handed is not None:
        invocation = decode_invocation(handed)
        if invocation.attempt_id == attempt_id:
            return invocation
    with engine.read() as conn:
        invocation = read_invocation(conn, attempt_id)
    if invocation.owner_id != owner_id or invocation.status not in LIVE:
        log.error(
            "not starting: attempt %s is %s and owned by %s, not by %s",
            attempt_id,
            invocation.status.value,
            invocation.owner_id,
            owner_id,
        )
        return None
    return invocation


def _released() -> bool:
    """Wait until the owner has recorded this process RUNNING (a byte on the start pipe);
    False when it gave up or died first (end of file): the task must not run then."""
    start = os.environ.pop(START_FD_VARIABLE, None)
    if start is None:
        return True  # started by hand, not by an owner: nobody to wait for
    descriptor = int(start)
    try:
        released = os.read(descriptor, len(GO)) == GO
    finally:
        os.close(descriptor)
    if not released:
        log.error("not starting: the owner did not record this task process RUNNING")
    return released


def _execute(task: Task) -> tuple[AttemptOutcome, Offset | None, int]:
    invocation = task.invocation
    log.info(
        "running %s task %s (attempt %s)",
        invocation.handler,
        invocation.task_code,
        invocation.attempt_number,
    )
    try:
        result: HandlerResult = run_handler(task)
    except EtlCraftError as error:
        log.error("%s failed: %s", invocation.task_code, error)
        log.debug("traceback", exc_info=True)
        failed = _failed(str(error), int(error.exit_code), retryable=error.retryable)
        return failed, None, int(error.exit_code)
    except Exception as error:
        log.error(
            "%s failed: %s: %s\n%s",
            invocation.task_code,
            type(error).__name__,
            error,
            traceback.format_exc(),
        )
        failed = _failed(f"{type(error).__name__}: {error}", int(ExitCode.TASK), retryable=True)
        return failed, None, int(ExitCode.TASK)
    log.info("%s succeeded: %s", invocation.task_code, result.counts)
    return AttemptOutcome(AttemptStatus.SUCCESS, result.counts, exit_code=0), result.offset, 0


def _failed(message: str, code: int, *, retryable: bool) -> AttemptOutcome:
    first_line = message.strip().splitlines()[0] if message.strip() else "failed"
    return AttemptOutcome(
        AttemptStatus.FAILED, error_message=first_line, exit_code=code, retryable=retryable
    )


def _report(
    engine: EngineDB,
    invocation: AttemptInvocation,
    owner_id: str,
    actor: Actor,
    outcome: AttemptOutcome,
    ending: tuple[Offset | None, int],  # the offset to store, the exit code
    tail_bytes: int,
) -> int:
    offset, code = ending
    _flush()
    handover = os.environ.get(OUTCOME_PATH_VARIABLE)
    if handover is not None and _owner_lives(owner_id):
        hand_over(Path(handover), HandedOutcome(invocation.task_id, outcome, offset))
        doorbell = os.environ.get(DOORBELL_VARIABLE)
        if doorbell:
            ring(doorbell)
        return code
    path = os.environ.get(LOG_PATH_VARIABLE)
    recorded = AttemptOutcome(
        outcome.status,
        outcome.counts,
        error_message=outcome.error_message,
        task_log=tail(Path(path), tail_bytes) if path else None,
        exit_code=outcome.exit_code,
        retryable=outcome.retryable,
        source="CHILD",
    )
    try:
        with engine.transaction(actor) as conn:
            finish_with_offset(
                conn,
                invocation.attempt_id,
                actor,
                owner_id=owner_id,
                outcome=recorded,
                task_id=invocation.task_id,
                offset=offset,
            )
    except StaleTransitionError as refused:
        # A zombie: the attempt was settled by someone else; it must change nothing.
        log.error("outcome not recorded: %s", refused)
        return int(ExitCode.STALE_TRANSITION)
    return code


def _owner_lives(owner_id: str) -> bool:
    owner = parse_owner(owner_id)
    return owner is not None and alive_here(owner) is True


def _stop(signum: int, frame: FrameType | None) -> None:
    _flush()
    raise KeyboardInterrupt(f"stopped by signal {signum}")


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        stream.flush()


def _exit(code: int) -> None:
    """Exit as soon as the outcome is recorded, even if a script left threads running."""
    lingering = [
        t.name for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon
    ]
    if lingering:
        log.warning("exiting although threads still run: %s", ", ".join(lingering))
    flush_traces()  # os._exit runs no exit handler, the exporter's among them
    _flush()
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    main()
