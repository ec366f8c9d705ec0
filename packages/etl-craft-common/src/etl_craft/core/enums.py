"""The closed vocabularies of the Engine DB, mirrored by its check constraints."""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    QUEUED = "QUEUED"
    IN_PROGRESS = "IN-PROGRESS"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    CANCELLED = "CANCELLED"

    @property
    def terminal(self) -> bool:
        return self not in (RunStatus.QUEUED, RunStatus.IN_PROGRESS)


class TaskRunStatus(StrEnum):
    """The summary of a task run: the status of its latest attempt, as users read it."""

    IN_PROGRESS = "IN-PROGRESS"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"
    CANCELLED = "CANCELLED"

    @property
    def terminal(self) -> bool:
        return self is not TaskRunStatus.IN_PROGRESS


class AttemptStatus(StrEnum):
    QUEUED = "QUEUED"
    CLAIMED = "CLAIMED"
    RUNNING = "RUNNING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    TIMED_OUT = "TIMED_OUT"
    CANCELLED = "CANCELLED"
    LOST = "LOST"

    @property
    def terminal(self) -> bool:
        return self not in LIVE_ATTEMPT_STATUSES

    @property
    def summary(self) -> TaskRunStatus:
        """The task-run status this attempt status reads as."""
        return _ATTEMPT_SUMMARY[self]


LIVE_ATTEMPT_STATUSES = frozenset(
    {AttemptStatus.QUEUED, AttemptStatus.CLAIMED, AttemptStatus.RUNNING}
)

_ATTEMPT_SUMMARY = {
    AttemptStatus.QUEUED: TaskRunStatus.IN_PROGRESS,
    AttemptStatus.CLAIMED: TaskRunStatus.IN_PROGRESS,
    AttemptStatus.RUNNING: TaskRunStatus.IN_PROGRESS,
    AttemptStatus.SUCCESS: TaskRunStatus.SUCCESS,
    AttemptStatus.FAILED: TaskRunStatus.FAILED,
    AttemptStatus.TIMED_OUT: TaskRunStatus.FAILED,
    AttemptStatus.LOST: TaskRunStatus.FAILED,
    AttemptStatus.CANCELLED: TaskRunStatus.CANCELLED,
}


class TriggerKind(StrEnum):
    SCHEDULE = "SCHEDULE"
    MANUAL = "MANUAL"
    BACKFILL = "BACKFILL"
    ORCHESTRATOR = "ORCHESTRATOR"
    STAND_IN = "STAND_IN"


class Handler(StrEnum):
    SQL = "SQL"
    PYTHON = "PYTHON"
    BUSINESS_RULES = "BUSINESS_RULES"
    EMAIL_ALERT = "EMAIL_ALERT"


class RunCondition(StrEnum):
    ALL = "ALL"
    ANY = "ANY"
    N = "N"


class DependencyType(StrEnum):
    SUCCESS = "SUCCESS"
    FAILURE = "FAILURE"
    HAS_DATA = "HAS_DATA"
    ALWAYS = "ALWAYS"


class SlotKind(StrEnum):
    INGESTION = "ingestion"
    WAREHOUSE = "warehouse"


class MigrationStream(StrEnum):
    ENGINE = "ENGINE"
    PROJECT = "PROJECT"


class WorkerStatus(StrEnum):
    ACTIVE = "ACTIVE"
    DRAINING = "DRAINING"  # finishes what it runs, claims nothing new
    GONE = "GONE"


class Role(StrEnum):
    VIEWER = "viewer"  # reads only
    OPERATOR = "operator"  # also run controls: trigger, cancel, pause, mark, rerun, backfill
    DEVELOPER = "developer"  # also metadata edits
    ADMIN = "admin"  # also tokens and users

    def allows(self, needed: Role) -> bool:
        order = list(Role)
        return order.index(self) >= order.index(needed)


class EditKind(StrEnum):
    """A kind of CFG_ row, as the metadata editor and the pipeline specs change them."""

    PIPELINE = "pipeline"
    PIPELINE_PARAMETER = "pipeline_parameter"
    PIPELINE_DEPENDENCY = "pipeline_dependency"
    TASK = "task"
    TASK_PARAMETER = "task_parameter"
    TASK_DEPENDENCY = "task_dependency"
    BUSINESS_RULE = "business_rule"
