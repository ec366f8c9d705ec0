"""An Engine DB failure tells a cut-off (nothing answered) from an answer (a cancelled or
refused statement): only a cut-off may get an owner to fence its attempts."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from sqlalchemy.engine import make_url

from etl_craft.core.errors import EngineDBError
from etl_craft.enginedb.connection import EngineDB, EngineTimeouts
from etl_craft.enginedb.reach import unreachable
from tests.fixtures.metadata import TESTER, execute

pytestmark = pytest.mark.postgres


@pytest.fixture
def engine(pg_fresh_url: str) -> Iterator[EngineDB]:
    db = EngineDB(pg_fresh_url, timeouts=EngineTimeouts(connect_seconds=2, statement_seconds=0.3))
    yield db
    db.dispose()


def test_a_refused_connection_is_a_cut_off(pg_fresh_url: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = make_url(pg_fresh_url).set(port=port).render_as_string(hide_password=False)
    nowhere = EngineDB(url, null_pool=True)
    with pytest.raises(EngineDBError) as failed, nowhere.read() as conn:
        execute(conn, "SELECT 1")
    assert unreachable(failed.value)


def test_a_connection_terminated_under_the_owner_is_a_cut_off(engine: EngineDB) -> None:
    def terminated_under_it() -> None:
        with engine.session() as conn:
            backend = execute(conn, "SELECT pg_backend_pid()").scalar()
            with engine.session() as other:  # as a restarting server does to every session
                execute(other, "SELECT pg_terminate_backend(:p)", p=backend)
            execute(conn, "SELECT 1")

    with pytest.raises(EngineDBError) as failed:
        terminated_under_it()
    assert unreachable(failed.value)


def test_a_statement_cancelled_after_its_timeout_is_an_answer(engine: EngineDB) -> None:
    with pytest.raises(EngineDBError) as failed, engine.read() as conn:
        execute(conn, "SELECT pg_sleep(5)")
    assert "statement timeout" in str(failed.value)
    assert not unreachable(failed.value)


def test_a_renewal_waiting_on_a_row_lock_past_the_timeout_is_an_answer(engine: EngineDB) -> None:
    with engine.transaction(TESTER) as conn:
        execute(conn, "CREATE TABLE held (x int)")
        execute(conn, "INSERT INTO held VALUES (1)")
    with engine.transaction(TESTER) as holder:
        execute(holder, "SELECT x FROM held FOR UPDATE")
        with pytest.raises(EngineDBError) as failed, engine.transaction(TESTER) as waiter:
            execute(waiter, "UPDATE held SET x = 2")
    assert not unreachable(failed.value)
