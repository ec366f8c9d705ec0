"""PostgreSQL-only guard behaviour: TRUNCATE, and the message naming the table and the remedy."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy.exc import DBAPIError, ProgrammingError

from etl_craft.core.errors import WriteGuardError
from etl_craft.enginedb.connection import GUARD_SQLSTATE, EngineDB
from etl_craft.enginedb.guards import reserved_tables
from tests.fixtures.metadata import TESTER, execute
from tests.integration.enginedb.test_write_guards import REFUSED, SEED, Plain


@pytest.fixture(scope="module")
def seeded(pg_engine_url: str) -> Iterator[EngineDB]:
    db = EngineDB(pg_engine_url)
    with db.transaction(TESTER) as conn:
        for statement in SEED:
            execute(conn, statement)
    yield db
    db.dispose()


@pytest.fixture
def plain(pg_engine_url: str) -> Iterator[Plain]:
    connection = Plain(pg_engine_url)
    yield connection
    connection.close()


def test_plain_truncate_is_refused(seeded: EngineDB, plain: Plain) -> None:
    with seeded.read() as conn:
        tables = [table.name for table in reserved_tables(conn)]
    for table in tables:
        with pytest.raises(REFUSED, match="is written only by etl-craft"):
            plain.run(f"TRUNCATE {table} CASCADE")
    with seeded.read() as conn:
        assert execute(conn, "SELECT count(*) FROM AUD_ACTIONS").scalar_one() == 1


def test_the_refusal_names_the_table_and_the_command_to_use(seeded: EngineDB, plain: Plain) -> None:
    with pytest.raises(REFUSED) as refused:
        plain.run("DELETE FROM AUD_TASK_RUN_LOG")
    assert "AUD_TASK_RUN_LOG is written only by etl-craft; change runs with etl-craft run" in str(
        refused.value
    )
    with pytest.raises(REFUSED) as refused:
        plain.run("UPDATE CFG_TASKS SET TASK_CODE = 'x'")
    assert (
        "CFG_TASKS is written only by etl-craft; change metadata with a project migration"
        in str(refused.value)
    )


def test_every_guard_refusal_carries_the_guard_sqlstate(seeded: EngineDB, plain: Plain) -> None:
    for statement in (
        "DELETE FROM AUD_TASK_RUN_LOG",
        "TRUNCATE AUD_ACTIONS CASCADE",
        "INSERT INTO CFG_POOLS (POOL_NAME) VALUES ('plain')",
    ):
        with pytest.raises(psycopg.Error) as refused:
            plain.run(statement)
        assert refused.value.sqlstate == GUARD_SQLSTATE, statement
    with pytest.raises(WriteGuardError, match="AUD_ACTIONS is append-only") as translated:
        with seeded.transaction(TESTER) as conn:
            execute(conn, "DELETE FROM AUD_ACTIONS")
    cause = translated.value.__cause__
    assert isinstance(cause, DBAPIError)
    assert isinstance(cause.orig, psycopg.Error)
    assert cause.orig.sqlstate == GUARD_SQLSTATE


def test_an_error_that_only_quotes_a_guard_is_no_guard_refusal(seeded: EngineDB) -> None:
    # The wording of a guard inside another error's message: the code, not the words, decides.
    with pytest.raises(ProgrammingError, match="does not exist"):
        with seeded.read() as conn:
            execute(conn, 'SELECT * FROM "AUD_X is written only by etl-craft; append-only"')
