"""The allowed status changes and fencing writes, as data: one row per transition.

A fencing write changes who owns a row or how long (OWNER_ID, LEASE_EXPIRES_AT) and leaves
its status as it is: its row has the same statuses on both sides. Each row names the race it
prevents. A test walks every (from, to) pair of each entity against these rows, on both Engine
DB dialects; workers, and the rows a worker's heartbeat renews, on PostgreSQL, the only Engine
DB that has workers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from etl_craft.core.enums import AttemptStatus as A
from etl_craft.core.enums import RunStatus as R
from etl_craft.core.enums import TaskRunStatus as T
from etl_craft.core.enums import WorkerStatus as W


class Entity(StrEnum):
    RUN = "run"
    TASK_RUN = "task run"
    ATTEMPT = "attempt"
    WORKER = "worker"


@dataclass(frozen=True)
class Transition:
    name: str
    entity: Entity
    sources: frozenset[str]  # empty: the transition creates the row
    targets: frozenset[str]
    owner_fenced: bool
    who: str
    guard: str
    prevents: str
    bulk: bool  # changes every row its guard matches, not one row named by id


def _t(
    name: str,
    entity: Entity,
    sources: Iterable[str],
    targets: Iterable[str],
    who: str,
    guard: str,
    prevents: str,
    *,
    owner_fenced: bool = False,
    bulk: bool = False,
) -> Transition:
    return Transition(
        name,
        entity,
        frozenset(sources),
        frozenset(targets),
        owner_fenced,
        who,
        guard,
        prevents,
        bulk,
    )


RUN_TERMINAL: set[str] = {R.SUCCESS, R.FAILED, R.SKIPPED, R.CANCELLED}
SETTLED_TASK_RUN: set[str] = {T.SUCCESS, T.FAILED, T.SKIPPED, T.CANCELLED}
OWNED: set[str] = {A.CLAIMED, A.RUNNING}
LIVE_RUN: set[str] = {R.QUEUED, R.IN_PROGRESS}
SERVING: set[str] = {W.ACTIVE, W.DRAINING}

TRANSITIONS: tuple[Transition, ...] = (
    _t(
        "create_run",
        Entity.RUN,
        set(),
        {R.QUEUED},
        "overseer, CLI run, backfill",
        "insert; one run per (PIPELINE_ID, RUN_KEY)",
        "two overseers or callers creating the same schedule tick or run key twice",
    ),
    _t(
        "admit_run",
        Entity.RUN,
        {R.QUEUED},
        {R.IN_PROGRESS},
        "overseer when the gate passes",
        "STATUS = QUEUED",
        "admitting a run that another caller skipped or cancelled meanwhile",
    ),
    _t(
        "skip_run",
        Entity.RUN,
        {R.QUEUED},
        {R.SKIPPED},
        "overseer when the gate refuses",
        "STATUS = QUEUED",
        "skipping a run another process already admitted (B23)",
    ),
    _t(
        "finish_run",
        Entity.RUN,
        {R.IN_PROGRESS},
        {R.SUCCESS, R.FAILED},
        "finalize (SYSTEM)",
        "STATUS = IN-PROGRESS and no live attempt",
        "finalizing while a task of the run is still running (B24)",
    ),
    _t(
        "finalize_remote_run",
        Entity.RUN,
        {R.IN_PROGRESS},
        {R.SUCCESS, R.FAILED, R.SKIPPED},
        "run --finalize-only (remote mode)",
        "STATUS = IN-PROGRESS and no live attempt",
        "ending an orchestrator's run while one of its attempts still writes",
    ),
    _t(
        "cancel_run",
        Entity.RUN,
        {R.QUEUED, R.IN_PROGRESS},
        {R.CANCELLED},
        "operator cancel",
        "STATUS live and no live attempt",
        "ending a run whose attempts still write",
    ),
    _t(
        "reopen_run",
        Entity.RUN,
        RUN_TERMINAL,
        {R.IN_PROGRESS},
        "operator reopen, mark, --rerun",
        "terminal, and no other live run of the pipeline",
        "two live runs of one pipeline",
    ),
    _t(
        "mark_run",
        Entity.RUN,
        {R.IN_PROGRESS, *RUN_TERMINAL},
        {R.SUCCESS, R.FAILED, R.SKIPPED},
        "operator mark",
        "IN-PROGRESS or terminal, no live attempt",
        "declaring an outcome while an attempt may still change it",
    ),
    _t(
        "claim_run_lease",
        Entity.RUN,
        LIVE_RUN,
        LIVE_RUN,
        "overseer, CLI run: the run's supervisor",
        "STATUS live and the lease free, expired or the caller's already",
        "two supervisors driving one run at once",
    ),
    _t(
        "renew_run_lease",
        Entity.RUN,
        LIVE_RUN,
        LIVE_RUN,
        "the supervisor's heartbeat",
        "STATUS live and OWNER_ID = owner",
        "a supervisor that lost its run (lease expired, taken over) extending the new "
        "owner's lease",
        owner_fenced=True,
    ),
    _t(
        "release_run_lease",
        Entity.RUN,
        set(R),
        set(R),
        "the supervisor as it stops driving the run",
        "OWNER_ID = owner",
        "a former supervisor freeing a run that another one has taken over since",
        owner_fenced=True,
    ),
    _t(
        "create_task_run",
        Entity.TASK_RUN,
        set(),
        {T.IN_PROGRESS},
        "scheduler",
        "insert; one task run per task per run",
        "two schedulers starting one task twice",
    ),
    _t(
        "skip_task_run",
        Entity.TASK_RUN,
        set(),
        {T.SKIPPED},
        "scheduler, operator --skip",
        "insert; one task run per task per run",
        "skipping a task another process started",
    ),
    _t(
        "mark_task_run",
        Entity.TASK_RUN,
        SETTLED_TASK_RUN,
        {T.SUCCESS, T.FAILED, T.SKIPPED},
        "operator mark",
        "settled and no live attempt",
        "overwriting the outcome of an attempt that is still running",
    ),
    _t(
        "reword_skipped_task_run",
        Entity.TASK_RUN,
        {T.SKIPPED},
        {T.SKIPPED},
        "operator mark, judging the engine's skips again",
        "SKIPPED with no attempt",
        "rewording a skip that an attempt has replaced since",
    ),
    _t(
        "queue_attempt",
        Entity.ATTEMPT,
        set(),
        {A.QUEUED},
        "scheduler, retries, --rerun",
        "insert; at most one live attempt per task run",
        "duplicate task delivery: two attempts of one task run at once",
    ),
    _t(
        "claim_attempt",
        Entity.ATTEMPT,
        {A.QUEUED},
        {A.CLAIMED},
        "local provider, worker",
        "STATUS = QUEUED and due",
        "two owners starting the same attempt",
    ),
    _t(
        "start_attempt",
        Entity.ATTEMPT,
        {A.CLAIMED},
        {A.RUNNING},
        "the owner",
        "STATUS = CLAIMED and OWNER_ID = owner",
        "a process starting an attempt it lost",
        owner_fenced=True,
    ),
    _t(
        "finish_attempt",
        Entity.ATTEMPT,
        OWNED,
        {A.SUCCESS, A.FAILED},
        "the owner (child or parent)",
        "STATUS claimed or running and OWNER_ID = owner",
        "a zombie child reporting after its attempt was lost or retried (B8)",
        owner_fenced=True,
    ),
    _t(
        "time_out_attempt",
        Entity.ATTEMPT,
        {A.RUNNING},
        {A.TIMED_OUT},
        "the owner on its time limit",
        "STATUS = RUNNING and OWNER_ID = owner",
        "timing out an attempt that already reported",
        owner_fenced=True,
    ),
    _t(
        "cancel_queued_attempt",
        Entity.ATTEMPT,
        {A.QUEUED},
        {A.CANCELLED},
        "operator, run cancel",
        "STATUS = QUEUED",
        "cancelling an attempt a worker claimed meanwhile",
    ),
    _t(
        "cancel_owned_attempt",
        Entity.ATTEMPT,
        OWNED,
        {A.CANCELLED},
        "the owner, after stopping it",
        "STATUS claimed or running and OWNER_ID = owner",
        "recording a cancel for an attempt that already ended",
        owner_fenced=True,
    ),
    _t(
        "lose_attempt",
        Entity.ATTEMPT,
        OWNED,
        {A.LOST},
        "reconciler (SYSTEM)",
        "STATUS claimed or running and the lease expired",
        "declaring lost an attempt whose owner still renews its lease",
    ),
    _t(
        "recover_attempt",
        Entity.ATTEMPT,
        OWNED,
        {A.SUCCESS},
        "reconciler (SYSTEM)",
        "lease expired and the warehouse attempt ledger holds the attempt's commit",
        "retrying or failing an action whose writes committed before its process died",
    ),
    _t(
        "renew_attempt_lease",
        Entity.ATTEMPT,
        OWNED,
        OWNED,
        "the owner's heartbeat (local pools)",
        "STATUS claimed or running and OWNER_ID = owner",
        "an owner that lost its attempt (LOST, retried elsewhere) keeping it alive",
        owner_fenced=True,
    ),
    _t(
        "renew_worker_attempt_leases",
        Entity.ATTEMPT,
        OWNED,
        OWNED,
        "a worker's heartbeat, in one statement with beat_worker",
        "STATUS claimed or running, OWNER_ID = the worker, and the worker not GONE",
        "a worker renewing an attempt that was LOST or claimed by another owner, or any "
        "attempt once it was declared GONE and its attempts may be retried elsewhere",
        owner_fenced=True,
        bulk=True,
    ),
    _t(
        "register_worker",
        Entity.WORKER,
        set(),
        {W.ACTIVE},
        "worker agent as it starts",
        "insert; one row per WORKER_ID, a new id for each start",
        "a restarted agent taking over the row, and so the attempts, of the one it replaces",
    ),
    _t(
        "beat_worker",
        Entity.WORKER,
        SERVING,
        SERVING,
        "worker agent, every heartbeat interval",
        "STATUS ACTIVE or DRAINING",
        "a worker declared GONE looking alive again while its attempts are retried elsewhere",
    ),
    _t(
        "drain_worker",
        Entity.WORKER,
        {W.ACTIVE},
        {W.DRAINING},
        "worker agent on SIGTERM or SIGINT",
        "STATUS = ACTIVE",
        "a worker declared GONE counting as capacity again while it drains",
    ),
    _t(
        "retire_worker",
        Entity.WORKER,
        SERVING,
        {W.GONE},
        "worker agent as it stops",
        "STATUS ACTIVE or DRAINING",
        "stamping a second STOPPED_AT on a worker the overseer declared GONE first",
    ),
    _t(
        "mark_silent_workers_gone",
        Entity.WORKER,
        SERVING,
        {W.GONE},
        "overseer (SYSTEM)",
        "STATUS ACTIVE or DRAINING and no heartbeat for three intervals",
        "declaring GONE a worker that beat meanwhile, whose attempts would be retried while "
        "it still runs them",
        bulk=True,
    ),
)

BY_NAME = {transition.name: transition for transition in TRANSITIONS}
