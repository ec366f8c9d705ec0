"""One error class per exit code.

Every message names the object, the value found, what was expected and the remedy.
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar


class ExitCode(IntEnum):
    SUCCESS = 0
    FAILURE = 1
    USAGE = 2
    CONFIGURATION = 3
    METADATA = 4
    ENGINE_DB = 5
    MIGRATION = 6
    WAREHOUSE = 7
    TASK = 8
    RUN_STATE = 9
    TIMEOUT = 10
    CANCELLED = 11
    ALERT = 12
    SCRIPT = 13
    NOT_FOUND = 14
    AUTHENTICATION = 15
    UNEXPECTED = 16
    INCOMPLETE = 17
    WAITING = 18
    INJECTED_FAULT = 19
    STALE_TRANSITION = 20
    SQL_GUARD = 21
    WRITE_GUARD = 22
    ORCHESTRATOR_UNSUPPORTED = 23
    CLONING = 24


class EtlCraftError(Exception):
    """Base of every error etl-craft raises on purpose."""

    exit_code: ClassVar[ExitCode] = ExitCode.UNEXPECTED
    retryable: ClassVar[bool] = True


class UsageError(EtlCraftError):
    exit_code = ExitCode.USAGE
    retryable = False


class ConfigurationError(EtlCraftError):
    exit_code = ExitCode.CONFIGURATION
    retryable = False


class MetadataError(EtlCraftError):
    exit_code = ExitCode.METADATA
    retryable = False


class EngineDBError(EtlCraftError):
    exit_code = ExitCode.ENGINE_DB


class MigrationError(EtlCraftError):
    exit_code = ExitCode.MIGRATION
    retryable = False


class WarehouseError(EtlCraftError):
    exit_code = ExitCode.WAREHOUSE


class TaskError(EtlCraftError):
    exit_code = ExitCode.TASK


class RunStateError(EtlCraftError):
    exit_code = ExitCode.RUN_STATE
    retryable = False


class AlertError(EtlCraftError):
    exit_code = ExitCode.ALERT


class ScriptError(EtlCraftError):
    exit_code = ExitCode.SCRIPT


class NotFoundError(EtlCraftError):
    exit_code = ExitCode.NOT_FOUND
    retryable = False


class AuthenticationError(EtlCraftError):
    exit_code = ExitCode.AUTHENTICATION
    retryable = False


class IncompleteError(EtlCraftError):
    exit_code = ExitCode.INCOMPLETE


class WaitingError(EtlCraftError):
    exit_code = ExitCode.WAITING


class InjectedFaultError(EtlCraftError):
    exit_code = ExitCode.INJECTED_FAULT


class StaleTransitionError(EtlCraftError):
    """A guarded status change found the row in another state or owned by someone else."""

    exit_code = ExitCode.STALE_TRANSITION
    retryable = False


class SqlGuardError(EtlCraftError):
    exit_code = ExitCode.SQL_GUARD
    retryable = False


class WriteGuardError(EtlCraftError):
    """The Engine DB refused a write that did not come through etl-craft."""

    exit_code = ExitCode.WRITE_GUARD
    retryable = False


class OrchestratorUnsupportedError(EtlCraftError):
    """A rule of the metadata that the external orchestrator (remote mode, generate-yml) cannot
    express: N run conditions, HAS_DATA dependencies, one task's dependencies of different types.
    Nothing was generated or run; the message names the pipeline, task, rule and remedy."""

    exit_code = ExitCode.ORCHESTRATOR_UNSUPPORTED
    retryable = False


class CloningError(EtlCraftError):
    """A clone could not copy the AUD_ tables into their warehouse mirror (by hand: its exit
    code; on the overseer's schedule: logged, and the next turn tries again)."""

    exit_code = ExitCode.CLONING
