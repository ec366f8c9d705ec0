"""Running a pipeline in the foreground, and finding the run a command acts on."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

from etl_craft.core.actor import SYSTEM
from etl_craft.core.enums import RunStatus, TriggerKind
from etl_craft.core.errors import (
    NotFoundError,
    RunStateError,
    StaleTransitionError,
)
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.interventions import ActionScope, record_scoped_action
from etl_craft.enginedb.run_lists import LiveRun, live_runs, lock_pipeline_runs, run_id_by_key
from etl_craft.enginedb.runs import RunRow, read_pipeline_shape, read_run
from etl_craft.enginedb.transitions import claim_run_lease, create_run, release_run_lease
from etl_craft.operations.context import OperationContext
from etl_craft.operations.runs.views import RunView, pipeline_id_of, read_run_view
from etl_craft.operations.validate.blocking import refuse_blocked
from etl_craft.runtime.heartbeat import Heartbeat
from etl_craft.runtime.reconcile import (
    LedgerLookup,
    ReconcileReport,
    reconcile,
    warehouse_ledger,
)
from etl_craft.runtime.stopping import SignalStop, active
from etl_craft.scheduling.admission import admit
from etl_craft.scheduling.driver import supervised_elsewhere
from etl_craft.scheduling.gatekeeper import Bypass
from etl_craft.supervision.foreground import ForegroundSupervisor


@dataclass(frozen=True)
class RunRequest:
    pipeline_code: str
    run_id: int | None = None
    run_key: str | None = None
    run_date: date | None = None
    task_codes: tuple[str, ...] = ()  # run only these tasks (run --task)
    trigger_kind: TriggerKind = TriggerKind.MANUAL


def run_pipeline(
    ctx: OperationContext, request: RunRequest, bypass: Bypass | None = None
) -> RunView:
    """Reconcile, find or create the run, admit it, and supervise it to its end."""
    with admitted_run(ctx, request, bypass) as held:
        run = held.run
        if run.status is RunStatus.IN_PROGRESS:
            only = _task_ids(ctx, run, request.task_codes) if request.task_codes else None
            supervise_run(ctx, held, only, bypass)
    with ctx.engine.read() as conn:
        return read_run_view(conn, run.pipeline_run_id)


@dataclass(frozen=True)
class HeldRun:
    """A run this caller holds the lease of, from when it found or created it; its keeper
    renews that lease until supervision takes the run over."""

    run: RunRow
    keeper: Heartbeat


@contextmanager
def admitted_run(
    ctx: OperationContext, request: RunRequest, bypass: Bypass | None
) -> Iterator[HeldRun]:
    """Reconcile, find or create the run, and admit it through its pipeline gate (or skip it).

    The run's lease, claimed with the run, is renewed until the block ends or supervision
    takes the run over: neither a gate's wait nor a slow start of supervision lets it expire,
    so a server never admits or drives the run this caller asked for."""
    reconcile_now(ctx)
    run = _run_to_supervise(ctx, request)
    settings = ctx.owner
    keeper = Heartbeat(
        ctx.engine,
        SYSTEM,
        settings.owner_id,
        settings.lease_seconds,
        settings.heartbeat_seconds,
        runs=lambda: (run.pipeline_run_id,),
        attempts=tuple,
    )
    with keeper:
        if run.status is RunStatus.QUEUED:
            run = _admit(ctx, run, bypass)
        yield HeldRun(run, keeper)


def _admit(ctx: OperationContext, run: RunRow, bypass: Bypass | None) -> RunRow:
    settings = ctx.owner
    # Another caller may admit (or skip) it while this one judges the gate.
    stop = active()
    try:
        with contextlib.suppress(StaleTransitionError):
            admit(
                ctx.engine,
                run.pipeline_run_id,
                wait_minutes=settings.gate_wait_minutes,
                poll_seconds=settings.poll_seconds,
                bypass=bypass,
                policy=settings.dependency_gates,
                sleep=time.sleep if stop is None else stop.sleep,
            )
    except SignalStop:
        # Stopped while its gate waits: the next etl-craft run must not wait out the lease.
        with contextlib.suppress(StaleTransitionError), ctx.engine.transaction(SYSTEM) as conn:
            release_run_lease(conn, run.pipeline_run_id, SYSTEM, owner_id=settings.owner_id)
        raise
    with ctx.engine.read() as conn:
        return read_run(conn, run.pipeline_run_id)


def supervise_run(
    ctx: OperationContext,
    run: RunRow | HeldRun,
    only: frozenset[int] | None,
    bypass: Bypass | None = None,
) -> None:
    """Supervise the run to its end; a held run's keeper stops once supervision holds it."""
    supervisor = ForegroundSupervisor(ctx.engine, ctx.owner, ctx.actor, ledger_lookup(ctx), bypass)
    if isinstance(run, HeldRun):
        supervisor.supervise(run.run.pipeline_run_id, only, taken=run.keeper.stop)
    else:
        supervisor.supervise(run.pipeline_run_id, only)


def _task_ids(ctx: OperationContext, run: RunRow, codes: tuple[str, ...]) -> frozenset[int]:
    with ctx.engine.read() as conn:
        tasks = {
            task.task_code: task.task_id
            for task in read_pipeline_shape(conn, run.pipeline_id).tasks
        }
    unknown = [code for code in codes if code not in tasks]
    if unknown:
        raise NotFoundError(
            f"pipeline {run.pipeline_code} has no active task {', '.join(unknown)}; its tasks are "
            f"{', '.join(sorted(tasks))}"
        )
    return frozenset(tasks[code] for code in codes)


def reconcile_now(ctx: OperationContext) -> ReconcileReport:
    return reconcile(ctx.engine, ledger_lookup(ctx), ctx.owner.lease_seconds)


def reconcile_requested(ctx: OperationContext) -> ReconcileReport:
    """`etl-craft reconcile`: its AUD_ACTIONS row, then the reconcile (which may settle attempts
    of any run, so the row names only the project)."""
    with ctx.engine.transaction(ctx.actor) as conn:
        record_scoped_action(
            conn,
            ctx.actor,
            command="reconcile",
            arguments={},
            started_at=utc_now(),
            scope=ActionScope(ctx.project_code),
        )
    return reconcile_now(ctx)


def ledger_lookup(ctx: OperationContext) -> LedgerLookup | None:
    return None if ctx.connector is None else warehouse_ledger(ctx.connector.warehouse)


def _run_to_supervise(ctx: OperationContext, request: RunRequest) -> RunRow:
    with ctx.engine.transaction(ctx.actor) as conn:
        run = find_and_hold_run(conn, ctx, request)
    if run.status.terminal:
        raise RunStateError(
            f"run {run.pipeline_run_id} of {run.pipeline_code} has ended {run.status}; to run it "
            "again reopen it (etl-craft reopen) or rerun a task (etl-craft rerun)"
        )
    return run


def find_and_hold_run(conn: EngineConnection, ctx: OperationContext, request: RunRequest) -> RunRow:
    """``find_or_create_run``, and a live run's lease claimed for this caller in the same
    transaction: a server never sees the run unheld, so it never admits or drives the run the
    caller asked for. Taken with the pipeline's lock held, so a second caller is refused here
    at once."""
    run = find_or_create_run(conn, ctx, request)
    if not run.status.terminal:
        try:
            claim_run_lease(
                conn,
                run.pipeline_run_id,
                SYSTEM,
                owner_id=ctx.owner.owner_id,
                lease_seconds=ctx.owner.lease_seconds,
            )
        except StaleTransitionError:
            raise supervised_elsewhere(read_run(conn, run.pipeline_run_id)) from None
    return run


def find_or_create_run(
    conn: EngineConnection, ctx: OperationContext, request: RunRequest
) -> RunRow:
    """The named run, else the pipeline's single live run of the request's kind, else a new one.

    A scheduled or manual run and a backfill run never take over, nor start beside, each other
    (S2.A.3); a backfill date resumes a live backfill run of that date. A run named by id is
    continued whatever its kind: naming it is the operator's choice.
    """
    pipeline_id = pipeline_id_of(conn, ctx.project_code, request.pipeline_code)
    # A graph that cannot be built would leave a run no one can supervise.
    refuse_blocked(conn, ctx.project_code, request.pipeline_code)
    # Two callers at once must find the same run, never create one each.
    lock_pipeline_runs(conn, pipeline_id)
    if request.run_id is not None:
        return _owned_run(conn, request.run_id, pipeline_id, request.pipeline_code)
    live = live_runs(conn, pipeline_id)
    if request.run_key is not None:
        found = run_id_by_key(conn, pipeline_id, request.run_key)
        if found is not None:
            return read_run(conn, found)
        _refuse_other_kind(conn, request, live)
        return _create(conn, ctx, pipeline_id, request, request.run_key)
    _refuse_other_kind(conn, request, live)
    if len(live) > 1:
        raise RunStateError(_ambiguous(request.pipeline_code, live))
    if live:
        return read_run(conn, live[0].pipeline_run_id)
    return _create(conn, ctx, pipeline_id, request, _new_key(ctx, request))


def _new_key(ctx: OperationContext, request: RunRequest) -> str:
    if request.trigger_kind is TriggerKind.BACKFILL:
        return f"backfill:{_run_date(ctx, request).isoformat()}:{uuid.uuid4()}"
    return f"manual:{uuid.uuid4()}"


def _refuse_other_kind(
    conn: EngineConnection, request: RunRequest, live: Sequence[LiveRun]
) -> None:
    backfill = request.trigger_kind is TriggerKind.BACKFILL
    for row in live:
        other = read_run(conn, row.pipeline_run_id)
        if other.trigger_kind == TriggerKind.BACKFILL:
            if backfill and other.run_date == request.run_date:
                continue  # the same backfill date, resumed
        elif not backfill:
            continue
        since = f"started {other.start_date:%Y-%m-%d %H:%M:%S}Z" if other.start_date else "queued"
        what = f"backfill date {request.run_date}" if backfill else "a new run"
        raise RunStateError(
            f"pipeline {request.pipeline_code} has {other.trigger_kind} run "
            f"{other.pipeline_run_id} (key {other.run_key}, run date {other.run_date}, {since}) "
            f"in progress; {what} waits until it ends. Let it finish (etl-craft run "
            f"--pipeline {request.pipeline_code} --run {other.pipeline_run_id} continues "
            f"it), or cancel it (etl-craft cancel --pipeline {request.pipeline_code} "
            f"--run {other.pipeline_run_id} --reason ...)"
        )


def _create(
    conn: EngineConnection, ctx: OperationContext, pipeline_id: int, request: RunRequest, key: str
) -> RunRow:
    config = ctx.connector.fingerprint() if ctx.connector else None
    run_id = create_run(
        conn,
        pipeline_id=pipeline_id,
        run_key=key,
        trigger_kind=request.trigger_kind,
        run_date=_run_date(ctx, request),
        actor=ctx.actor,
        config_sha256=config,
    )
    return read_run(conn, run_id)


def _run_date(ctx: OperationContext, request: RunRequest) -> date:
    return new_run_date(ctx, request.run_date)


def new_run_date(ctx: OperationContext, requested: date | None = None) -> date:
    """The run date a new run gets: the one asked for, else today in the project's time zone."""
    return requested or datetime.now(ZoneInfo(ctx.timezone)).date()


def _owned_run(conn: EngineConnection, run_id: int, pipeline_id: int, pipeline_code: str) -> RunRow:
    run = read_run(conn, run_id)
    if run.pipeline_id != pipeline_id:
        raise RunStateError(
            f"run {run_id} belongs to pipeline {run.pipeline_code}, not {pipeline_code}; "
            "check the --run"
        )
    return run


def _ambiguous(pipeline_code: str, live: Sequence[LiveRun]) -> str:
    listed = "; ".join(row.listed() for row in live)
    return (
        f"pipeline {pipeline_code} has {len(live)} runs in progress: {listed}; "
        "name the one to act on with --run or --run-key"
    )
