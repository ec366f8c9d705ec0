"""Which Engine DB statements PostgreSQL keeps a plan of: named ones of few values, once they
have run before on their connection; never a long IN list, whose plan must see its keys."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from etl_craft.enginedb.connection import PREPARED_VALUES, EngineConnection, EngineDB

pytestmark = pytest.mark.postgres


def prepared(conn: EngineConnection) -> list[str]:
    rows = conn.connection.exec_driver_sql("SELECT statement FROM pg_prepared_statements")
    return [str(row[0]) for row in rows]


def test_a_named_statement_run_again_is_prepared_and_an_unnamed_one_never(
    engine: EngineDB,
) -> None:
    with engine.read() as conn:
        conn.all("attempt_status", attempt_id=1)
        assert prepared(conn) == []  # a statement run once is only planned
        for attempt_id in (2, 3):
            conn.all("attempt_status", attempt_id=attempt_id)
            conn.connection.execute(text("SELECT count(*) FROM CFG_PROJECTS"))
        [kept] = prepared(conn)
        assert "FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID" in kept


def test_a_short_list_is_prepared_and_a_long_one_planned_each_time(engine: EngineDB) -> None:
    short, long = [1, 2], list(range(1, PREPARED_VALUES + 2))
    with engine.read() as conn:
        for _ in range(3):
            conn.all("attempt_invocations", attempt_id_list=long)
        assert prepared(conn) == []
        for _ in range(3):
            conn.all("attempt_invocations", attempt_id_list=short)
        [kept] = prepared(conn)
        assert "WHERE a.ATTEMPT_ID IN ($1, $2)" in kept


def test_a_script_runs_after_prepared_statements_on_its_connection(engine: EngineDB) -> None:
    with engine.read() as conn:
        for attempt_id in (1, 2, 3):
            conn.all("attempt_status", attempt_id=attempt_id)
        # Twice: a script of several statements must never be taken for one to prepare.
        for _ in range(2):
            conn.script("SELECT 1; SELECT 2;")
        assert len(prepared(conn)) == 1


def test_statements_stay_prepared_from_one_read_to_the_next(engine: EngineDB) -> None:
    for attempt_id in (1, 2, 3):
        with engine.read() as conn:
            conn.all("attempt_status", attempt_id=attempt_id)
    with engine.read() as conn:
        [kept] = prepared(conn)
        assert "FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID" in kept
