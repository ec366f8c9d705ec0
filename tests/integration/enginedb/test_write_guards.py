"""Only etl-craft writes AUD_ and CFG_ tables; history is append-only even for etl-craft."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import make_url

from etl_craft.core.errors import WriteGuardError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.guards import APPEND_ONLY_TABLES, reserved_tables
from tests.fixtures.metadata import TESTER, execute

# One row in every reserved table, inserted by the engine so the guards have rows to refuse on.
SEED = [
    "INSERT INTO CFG_PROJECTS (PROJECT_CODE) VALUES ('guarded')",
    "INSERT INTO CFG_POOLS (POOL_NAME) VALUES ('guarded')",
    "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE) SELECT PROJECT_ID, 'guarded' "
    "FROM CFG_PROJECTS WHERE PROJECT_CODE = 'guarded'",
    "INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE) SELECT PROJECT_ID, 'upstream' "
    "FROM CFG_PROJECTS WHERE PROJECT_CODE = 'guarded'",
    "INSERT INTO CFG_PIPELINE_PARAMETERS (PIPELINE_ID, PARAMETER_NAME, PARAMETER_VALUE) "
    "SELECT PIPELINE_ID, 'REGION', 'eu' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'guarded'",
    "INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) SELECT PIPELINE_ID, 'a', 'SQL' "
    "FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'guarded'",
    "INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER) SELECT PIPELINE_ID, 'b', 'SQL' "
    "FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'guarded'",
    "INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE) "
    "SELECT TASK_ID, 'ACTION', 'APPEND_TABLE' FROM CFG_TASKS WHERE TASK_CODE = 'a'",
    "INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID) "
    "SELECT b.TASK_ID, a.TASK_ID FROM CFG_TASKS a, CFG_TASKS b "
    "WHERE a.TASK_CODE = 'a' AND b.TASK_CODE = 'b'",
    "INSERT INTO CFG_PIPELINE_DEPENDENCY (PIPELINE_ID, DEPENDS_ON_PIPELINE_ID) "
    "SELECT d.PIPELINE_ID, u.PIPELINE_ID FROM CFG_PIPELINES d, CFG_PIPELINES u "
    "WHERE d.PIPELINE_CODE = 'guarded' AND u.PIPELINE_CODE = 'upstream'",
    "INSERT INTO CFG_BUSINESS_RULES (TASK_ID, RULE_CODE, RULE_TYPE, TARGET_TABLE, KEY_COLUMNS, "
    "RULE_SQL) SELECT TASK_ID, 'r1', 'REPORT', 's.t', 'id', 'SELECT 1 AS id' FROM CFG_TASKS "
    "WHERE TASK_CODE = 'a'",
    "INSERT INTO CFG_API_TOKENS (NAME, TOKEN_SHA256, ROLE) VALUES ('ci', 'abc', 'viewer')",
    "INSERT INTO CFG_USERS (USER_NAME, ROLE, SOURCE) VALUES ('alice', 'developer', 'password')",
    "INSERT INTO AUD_PIPELINES_RUN_LOG (PIPELINE_ID, RUN_KEY, TRIGGER_KIND, RUN_DATE, STATUS, "
    "QUEUED_AT, STARTED_BY, STARTED_BY_KIND) SELECT PIPELINE_ID, 'manual:g', 'MANUAL', "
    "'2026-01-01', 'IN-PROGRESS', etl_craft_now(), 't', 'HUMAN' FROM CFG_PIPELINES "
    "WHERE PIPELINE_CODE = 'guarded'",
    "INSERT INTO AUD_TASK_RUN_LOG (PIPELINE_RUN_ID, TASK_ID, STATUS, UPDATED_BY, UPDATED_BY_KIND) "
    "SELECT r.PIPELINE_RUN_ID, t.TASK_ID, 'SUCCESS', 't', 'HUMAN' FROM AUD_PIPELINES_RUN_LOG r, "
    "CFG_TASKS t WHERE r.RUN_KEY = 'manual:g' AND t.TASK_CODE = 'a'",
    "INSERT INTO AUD_TASK_ATTEMPTS (TASK_RUN_ID, ATTEMPT_NUMBER, STATUS, SLOT_KIND, QUEUED_AT, "
    "REQUESTED_BY, REQUESTED_BY_KIND) SELECT TASK_RUN_ID, 1, 'SUCCESS', 'warehouse', "
    "etl_craft_now(), 't', 'HUMAN' FROM AUD_TASK_RUN_LOG",
    "INSERT INTO AUD_GATE_DECISIONS (PIPELINE_RUN_ID, PIPELINE_DEPENDENCY_ID, RESULT, REASON, "
    "DECIDED_AT, DECIDED_BY, DECIDED_BY_KIND) SELECT r.PIPELINE_RUN_ID, d.PIPELINE_DEPENDENCY_ID, "
    "'SATISFIED', 'ok', etl_craft_now(), 't', 'SYSTEM' FROM AUD_PIPELINES_RUN_LOG r, "
    "CFG_PIPELINE_DEPENDENCY d",
    "INSERT INTO AUD_GATE_WAITS (PIPELINE_RUN_ID, FIRST_CHECK_AT, NEXT_CHECK_AT, WAIT_UNTIL) "
    "SELECT PIPELINE_RUN_ID, etl_craft_now(), etl_craft_now(), etl_craft_now() "
    "FROM AUD_PIPELINES_RUN_LOG",
    "INSERT INTO AUD_DEPENDENCY_CONSUMPTION (PIPELINE_RUN_ID, PIPELINE_DEPENDENCY_ID, DECISION_ID, "
    "CONSUMED_PIPELINE_RUN_ID, CONSUMED_AT) SELECT PIPELINE_RUN_ID, PIPELINE_DEPENDENCY_ID, "
    "DECISION_ID, PIPELINE_RUN_ID, etl_craft_now() FROM AUD_GATE_DECISIONS",
    "INSERT INTO AUD_RUN_INTERVENTIONS (PIPELINE_RUN_ID, KIND, REASON, REQUESTED_AT, REQUESTED_BY, "
    "REQUESTED_BY_KIND) SELECT PIPELINE_RUN_ID, 'MARK', 'why', etl_craft_now(), 't', 'HUMAN' "
    "FROM AUD_PIPELINES_RUN_LOG",
    "INSERT INTO AUD_PIPELINE_PAUSES (PROJECT_ID, REASON, PAUSED_AT, PAUSED_BY, PAUSED_BY_KIND) "
    "SELECT PROJECT_ID, 'why', etl_craft_now(), 't', 'HUMAN' FROM CFG_PROJECTS "
    "WHERE PROJECT_CODE = 'guarded'",
    "INSERT INTO AUD_ACTIONS (STARTED_AT, ENDED_AT, ACTOR, ACTOR_KIND, HOST, COMMAND, ARGUMENTS, "
    "OUTCOME) VALUES (etl_craft_now(), etl_craft_now(), 't', 'HUMAN', 'h', 'mark', '{}', "
    "'REQUESTED')",
    "INSERT INTO AUD_TASK_OFFSETS (TASK_ID, OFFSET_TYPE, OFFSET_VALUE, ATTEMPT_ID, UPDATED_AT) "
    "SELECT t.TASK_ID, 'INT', '5', a.ATTEMPT_ID, etl_craft_now() FROM CFG_TASKS t, "
    "AUD_TASK_ATTEMPTS a WHERE t.TASK_CODE = 'a'",
    "INSERT INTO AUD_BUSINESS_RULE_FLAGS (BUSINESS_RULE_ID, RULE_TYPE, TARGET_TABLE, KEY_VALUE, "
    "OPENED_AT, OPENED_TASK_RUN_ID, LAST_SEEN_AT, LAST_SEEN_TASK_RUN_ID) SELECT BUSINESS_RULE_ID, "
    "'REPORT', 's.t', '[1]', etl_craft_now(), 1, etl_craft_now(), 1 FROM CFG_BUSINESS_RULES",
    "INSERT INTO AUD_TARGET_HASH_VERSION (WAREHOUSE_NAME, TARGET_OBJECT, HASH_VERSION, UPDATED_AT, "
    "UPDATED_BY) VALUES ('w', 's.t', 1, etl_craft_now(), 't')",
    "INSERT INTO AUD_OVERSEERS (OVERSEER_ID, HOST, PID, VERSION, STARTED_AT, HEARTBEAT_AT) "
    "VALUES ('o', 'h', 1, '0.1.0', etl_craft_now(), etl_craft_now())",
    "INSERT INTO AUD_LEADERSHIP (LEADER_ROLE, EPOCH, OVERSEER_ID, TAKEN_AT) "
    "VALUES ('overseer', 1, 'o', etl_craft_now())",
    "INSERT INTO AUD_WORKERS (WORKER_ID, POOL, HOST, PID, VERSION, SCHEMA_VERSION, "
    "INGESTION_SLOTS, WAREHOUSE_SLOTS, STARTED_AT, HEARTBEAT_AT, STATUS) VALUES ('w', 'default', "
    "'h', 1, '0.1.0', 1, 1, 1, etl_craft_now(), etl_craft_now(), 'ACTIVE')",
    "INSERT INTO AUD_LINEAGE_TRACES (TASK_ID, SQL_HASH, INPUT_HASH, TRACE, TRACED_AT, TRACED_BY) "
    "SELECT TASK_ID, 'h', 'h', '{}', etl_craft_now(), 't' FROM CFG_TASKS WHERE TASK_CODE = 'a'",
    "INSERT INTO AUD_CATALOG_PUBLICATIONS (PROJECT_ID, PUBLIC_URL, HOSTING, FIRST_PUBLISHED_AT, "
    "PUBLISHED_AT, PUBLISHED_BY) SELECT PROJECT_ID, 'https://example.com/', 'BASE_URL', "
    "etl_craft_now(), etl_craft_now(), 't' FROM CFG_PROJECTS",
    "INSERT INTO AUD_DOWNSTREAM_RERUNS (PIPELINE_RUN_ID, TASK_ID, SINCE_ATTEMPT_ID, REASON, "
    "REQUESTED_AT, REQUESTED_BY, REQUESTED_BY_KIND) SELECT r.PIPELINE_RUN_ID, t.TASK_ID, 0, "
    "'redo', etl_craft_now(), 't', 'HUMAN' FROM AUD_PIPELINES_RUN_LOG r, CFG_TASKS t "
    "WHERE t.TASK_CODE = 'a'",
    "INSERT INTO AUD_UI_SESSIONS (SESSION_SHA256, TOKEN_ID, CLIENT, STARTED_AT, EXPIRES_AT) "
    "SELECT 'h', TOKEN_ID, 'c', etl_craft_now(), etl_craft_now() FROM CFG_API_TOKENS",
    "INSERT INTO AUD_UI_SIGN_INS (NONCE_SHA256, CLIENT, OUTCOME, ATTEMPTED_AT) "
    "VALUES ('n', 'c', 'FAILED', etl_craft_now())",
    "INSERT INTO AUD_ALERT_DELIVERIES (CHANNEL, EVENT, EVENT_KEY, PIPELINE_RUN_ID, OUTCOME, "
    "RAISED_AT) SELECT 'ops', 'RUN_FAILED', 'k', PIPELINE_RUN_ID, 'PENDING', etl_craft_now() "
    "FROM AUD_PIPELINES_RUN_LOG",
    "INSERT INTO AUD_PROJECT_BUNDLES (PROJECT_ID, STORE_URL, MANIFEST, MANIFEST_SHA256, "
    "FILE_COUNT, CREATED_BY, CREATED_BY_KIND, CREATED_AT) SELECT PROJECT_ID, 'file:///b', '{}', "
    "'h', 0, 't', 'HUMAN', etl_craft_now() FROM CFG_PROJECTS",
]


@pytest.fixture(scope="module")
def seeded(engine_db: EngineDB) -> EngineDB:
    with engine_db.transaction(TESTER) as conn:
        for statement in SEED:
            execute(conn, statement)
    return engine_db


@pytest.fixture(scope="module")
def tables(seeded: EngineDB) -> list[str]:
    with seeded.read() as conn:
        names = [table.name for table in reserved_tables(conn)]
    with seeded.read() as conn:
        for name in names:
            count = execute(conn, f"SELECT count(*) FROM {name}").scalar_one()
            assert count > 0, f"the seed left {name} empty, so its guards would not be tried"
    return names


class Plain:
    """A connection from any other tool: no etl-craft marking."""

    def __init__(self, url: str) -> None:
        parsed = make_url(url)
        self.dialect = parsed.get_backend_name()
        if self.dialect == "sqlite":
            self.sqlite = sqlite3.connect(str(parsed.database), isolation_level=None)
        else:
            plain = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
            self.pg = psycopg.connect(plain, autocommit=True)

    def run(self, sql: str) -> Any:
        if self.dialect == "sqlite":
            return self.sqlite.execute(sql)
        return self.pg.execute(sql)

    def close(self) -> None:
        (self.sqlite if self.dialect == "sqlite" else self.pg).close()


@pytest.fixture
def plain(engine_url: str) -> Iterator[Plain]:
    connection = Plain(engine_url)
    yield connection
    connection.close()


REFUSED = (sqlite3.DatabaseError, psycopg.Error)


def _first_column(plain: Plain, table: str) -> str:
    if plain.dialect == "sqlite":
        return str(plain.run(f"SELECT name FROM pragma_table_info('{table}')").fetchone()[0])
    return str(
        plain.run(
            "SELECT column_name FROM information_schema.columns WHERE table_name = "
            f"'{table.lower()}' AND table_schema = current_schema() ORDER BY ordinal_position"
        ).fetchone()[0]
    )


def _refusal(plain: Plain, sql: str) -> str:
    with pytest.raises(REFUSED) as refused:
        plain.run(sql)
    return str(refused.value)


def _marker(plain: Plain) -> str:
    # A plain SQLite connection lacks the functions the triggers call, which is how it refuses.
    return (
        "no such function: etl_craft_"
        if plain.dialect == "sqlite"
        else "is written only by etl-craft"
    )


def test_every_reserved_table_is_guarded(tables: list[str]) -> None:
    assert len(tables) == 35
    assert "SCHEMA_MIGRATIONS" in tables


def test_plain_inserts_are_refused(tables: list[str], plain: Plain) -> None:
    for table in tables:
        message = _refusal(plain, f"INSERT INTO {table} DEFAULT VALUES")
        assert _marker(plain) in message, table


def test_plain_updates_and_deletes_are_refused(tables: list[str], plain: Plain) -> None:
    for table in tables:
        column = _first_column(plain, table)
        update = _refusal(plain, f"UPDATE {table} SET {column} = {column}")
        delete = _refusal(plain, f"DELETE FROM {table}")
        assert _marker(plain) in update, table
        assert _marker(plain) in delete, table


def test_engine_writes_succeed(tables: list[str], seeded: EngineDB) -> None:
    with seeded.transaction(TESTER) as conn:
        execute(conn, "UPDATE CFG_PIPELINE_PARAMETERS SET PARAMETER_VALUE = 'us'")
        execute(conn, "UPDATE AUD_WORKERS SET STATUS = 'DRAINING'")
        execute(conn, "DELETE FROM AUD_GATE_WAITS")
    with seeded.read() as conn:
        assert execute(conn, "SELECT count(*) FROM AUD_GATE_WAITS").scalar_one() == 0


@pytest.mark.parametrize("table", sorted(APPEND_ONLY_TABLES))
def test_history_is_append_only_even_for_the_engine(
    tables: list[str], seeded: EngineDB, table: str
) -> None:
    with seeded.read() as conn:
        key = {t.name: t.key_column for t in reserved_tables(conn)}[table]
    for sql in (f"UPDATE {table} SET {key} = {key}", f"DELETE FROM {table}"):
        with pytest.raises(WriteGuardError, match="append-only"):
            with seeded.transaction(TESTER) as conn:
                execute(conn, sql)


def test_an_ended_attempt_is_immutable_for_the_engine(tables: list[str], seeded: EngineDB) -> None:
    with pytest.raises(WriteGuardError, match="once an attempt ends"):
        with seeded.transaction(TESTER) as conn:
            execute(conn, "UPDATE AUD_TASK_ATTEMPTS SET ERROR_MESSAGE = 'rewritten'")
    with pytest.raises(WriteGuardError, match="once an attempt ends"):
        with seeded.transaction(TESTER) as conn:
            execute(conn, "DELETE FROM AUD_TASK_ATTEMPTS")
