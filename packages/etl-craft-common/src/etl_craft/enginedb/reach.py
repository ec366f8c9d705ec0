"""Whether an Engine DB failure means it could not be reached, or that it answered.

An owner stops its attempts before their leases run out only when it is cut off from the
Engine DB (runtime/leases). An Engine DB that answered, even with an error (busy, a lock it
waited on, a statement timeout, too many clients), is there: the reconciler works against the
same database, and a renewal refused later stops the attempt anyway. Only a failure to connect,
or a connection dropped or shut down under the statement, counts as unreachable.
"""

from __future__ import annotations

import sqlite3

import psycopg
from sqlalchemy import exc as sa_exc

# connection_exception (08...), and a server shutting down or not yet accepting connections.
_CONNECTION_CLASS = "08"
_SERVER_GOING = frozenset({"57P01", "57P02", "57P03"})  # admin/crash shutdown, cannot connect now


def unreachable(error: BaseException) -> bool:
    """True when ``error`` (an EngineDBError or what it wraps) says the Engine DB could not be
    reached; False when it answered, or when the error says nothing about the connection."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sa_exc.DBAPIError):
            if current.connection_invalidated:
                return True
            current = current.orig
        elif isinstance(current, psycopg.Error):
            return _psycopg_unreachable(current)
        elif isinstance(current, sqlite3.Error):
            # A local file: busy and locked are answers; a file that can't be opened is not.
            return "unable to open database file" in str(current)
        elif isinstance(current, (ConnectionError, TimeoutError)):
            return True
        else:
            current = current.__cause__ or current.__context__
    return False


def _psycopg_unreachable(error: psycopg.Error) -> bool:
    state = error.sqlstate
    if state is None:
        # Raised by libpq itself, no server answer: refused, timed out, reset, closed.
        return isinstance(error, psycopg.OperationalError)
    return state.startswith(_CONNECTION_CLASS) or state in _SERVER_GOING
