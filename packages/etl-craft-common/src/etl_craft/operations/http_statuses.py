"""etl-craft's errors as HTTP statuses, shared by every service that answers over HTTP: what the
caller can do about each error is the same whether the API or the web UI reports it."""

from __future__ import annotations

from etl_craft.core.errors import (
    AuthenticationError,
    EngineDBError,
    EtlCraftError,
    IncompleteError,
    MetadataError,
    NotFoundError,
    RunStateError,
    StaleTransitionError,
    UsageError,
    WaitingError,
    WriteGuardError,
)
from etl_craft.enginedb.migrations import PendingMigrationsError
from etl_craft.operations.access.api_tokens import TokenNameTakenError
from etl_craft.operations.access.ui_sessions import SignInThrottledError
from etl_craft.operations.access.users import UserNameTakenError
from etl_craft.operations.metadata.edits import MigrationConflictError

STATUSES: dict[type[EtlCraftError], int] = {
    UsageError: 400,
    TokenNameTakenError: 409,  # a usage error to the CLI; over HTTP, a conflict over the name
    UserNameTakenError: 409,
    AuthenticationError: 401,
    SignInThrottledError: 429,  # too many failed sign-ins: wait, then try again
    NotFoundError: 404,
    RunStateError: 409,
    StaleTransitionError: 409,
    MetadataError: 409,
    MigrationConflictError: 409,  # another migration arrived since the edit's preview
    PendingMigrationsError: 409,  # the project's files are ahead of the Engine DB
    IncompleteError: 409,
    WaitingError: 409,
    WriteGuardError: 409,
    EngineDBError: 503,
}
# Errors whose own message may name hosts and statements: they stay in the service's log.
UNAVAILABLE = 503
SERVER_ERROR = 500


def status_of(error: EtlCraftError) -> int:
    """The status of ``error``'s nearest class in STATUSES; 500 for one it does not name."""
    for kind in type(error).__mro__:
        if kind in STATUSES:
            return STATUSES[kind]
    return SERVER_ERROR
