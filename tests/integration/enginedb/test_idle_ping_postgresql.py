"""A pooled Engine DB connection is pinged before use only after it sat idle: one cut while
idle is replaced unseen, one cut right after use fails a single transaction."""

from __future__ import annotations

import time

import psycopg
import pytest

from etl_craft.core.errors import EngineDBError
from etl_craft.enginedb import connection
from etl_craft.enginedb.connection import EngineDB
from tests.fixtures.metadata import TESTER

pytestmark = pytest.mark.postgres


def backend(engine: EngineDB) -> int:
    with engine.transaction(TESTER) as conn:
        return int(conn.connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())


def cut(admin_url: str, pid: int) -> None:
    """End the server side of a pooled connection, as a restart would, and wait until it has
    gone (the polls are bounded, nothing is timed)."""
    with psycopg.connect(admin_url, autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
        for _ in range(500):
            found = admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid])
            if found.fetchone() is None:
                return
            time.sleep(0.01)
    raise AssertionError(f"backend {pid} did not end")


def test_an_idle_connection_is_pinged_and_a_busy_one_is_not(
    engine: EngineDB, pg_admin_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every connection counts as idle: the one cut is found out by the ping and replaced.
    monkeypatch.setattr(connection, "PING_AFTER_IDLE_SECONDS", 0.0)
    first = backend(engine)
    cut(pg_admin_url, first)
    second = backend(engine)
    assert second != first

    # None counts as idle: the cut shows in the next transaction, and only in that one.
    monkeypatch.setattr(connection, "PING_AFTER_IDLE_SECONDS", 3600.0)
    cut(pg_admin_url, second)
    with pytest.raises(EngineDBError, match="Engine DB .* failed"):
        backend(engine)
    assert backend(engine) not in (first, second)


def test_a_pinged_connection_is_left_idle_for_a_session_to_take(
    engine: EngineDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The ping must not leave a transaction open: an autocommit session (LISTEN, the
    # overseer's leadership lock) could not switch the connection to autocommit inside one.
    monkeypatch.setattr(connection, "PING_AFTER_IDLE_SECONDS", 0.0)
    backend(engine)
    with engine.session() as session:
        session.run("listen_events")
        found = session.connection.exec_driver_sql("SELECT count(*) FROM pg_listening_channels()")
        assert found.scalar_one() == 1
