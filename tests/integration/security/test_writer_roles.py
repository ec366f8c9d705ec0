"""On PostgreSQL, writes to etl-craft's tables are authorized by role, never by a session's claim.

A login that was granted DML on every table but is neither the tables' owner nor a member of
the writer role is refused, whatever `etl_craft.actor` it sets; TRUNCATE is refused to all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

from etl_craft.core.errors import WriteGuardError
from etl_craft.enginedb.connection import GUARD_SQLSTATE, EngineDB
from etl_craft.enginedb.guards import install_guards
from etl_craft.operations.access.grants import GrantRequest, grants
from tests.fixtures.databases import unique_name
from tests.fixtures.metadata import TESTER, execute
from tests.integration.enginedb.test_write_guards import SEED

pytestmark = pytest.mark.postgres

FORGED_ACTOR = (
    "SELECT set_config('etl_craft.actor', 'etl-craft', true), "
    "set_config('etl_craft.actor_kind', 'SYSTEM', true)"
)


@dataclass(frozen=True)
class Cluster:
    """The module's Engine DB, its admin connection, and the roles this module made."""

    url: str
    admin: psycopg.Connection[tuple[object, ...]]
    writer_role: str
    reader_role: str
    roles: list[str]

    def login(self, prefix: str, *grants_sql: str) -> str:
        role = unique_name(prefix)
        self.roles.append(role)
        self.admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        for statement in grants_sql:
            self.admin.execute(sql.SQL(statement).format(role=sql.Identifier(role)))
        return role

    def connect_as(self, role: str) -> psycopg.Connection[tuple[object, ...]]:
        url = make_url(self.url).set(drivername="postgresql", username=role)
        return psycopg.connect(url.render_as_string(hide_password=False))

    def engine_as(self, role: str) -> EngineDB:
        return EngineDB(make_url(self.url).set(username=role).render_as_string(False))

    def scalar(self, query: str) -> object:
        row = self.admin.execute(query).fetchone()
        assert row is not None
        return row[0]


LEDGER = "SELECT count(*) || ':' || max(VERSION) || ':' || min(CHECKSUM) FROM SCHEMA_MIGRATIONS"
DML_ON_EVERYTHING = (
    "GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA public TO {role}",
    "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role}",
)


@pytest.fixture(scope="module")
def cluster(pg_engine_url: str) -> Iterator[Cluster]:
    """The Engine DB set up as `etl-craft setup --print-grants` says, with roles of its own."""
    writer_role, reader_role = unique_name("etl_craft_writer"), unique_name("etl_craft_reader")
    db = EngineDB(pg_engine_url)
    try:
        with db.transaction(TESTER) as conn:
            for statement in SEED:
                execute(conn, statement)
            install_guards(conn, writer_role)
        printed = grants(db, GrantRequest(writer_role=writer_role, reader_role=reader_role))
    finally:
        db.dispose()
    url = make_url(pg_engine_url).set(drivername="postgresql")
    admin = psycopg.connect(url.render_as_string(hide_password=False), autocommit=True)
    found = Cluster(pg_engine_url, admin, writer_role, reader_role, [writer_role, reader_role])
    for statement in printed.statements:
        admin.execute(statement.encode())
    yield found
    for role in reversed(found.roles):
        admin.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
    admin.close()


def test_a_forged_actor_does_not_let_a_dml_login_change_a_token(cluster: Cluster) -> None:
    intruder = cluster.login("etl_craft_intruder", *DML_ON_EVERYTHING)
    changes_before = cluster.scalar("SELECT count(*) FROM AUD_METADATA_CHANGES")
    with cluster.connect_as(intruder) as conn:
        conn.execute(FORGED_ACTOR)
        with pytest.raises(psycopg.errors.ProgrammingError) as refused:
            conn.execute("UPDATE CFG_API_TOKENS SET ROLE = 'admin' WHERE NAME = 'ci'")
    assert refused.value.sqlstate == GUARD_SQLSTATE
    message = str(refused.value)
    assert f"CFG_API_TOKENS is written only by etl-craft: login {intruder}" in message
    assert f"nor a member of the writer role {cluster.writer_role}" in message
    assert cluster.scalar("SELECT ROLE FROM CFG_API_TOKENS WHERE NAME = 'ci'") == "viewer"
    assert cluster.scalar("SELECT count(*) FROM AUD_METADATA_CHANGES") == changes_before


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO CFG_POOLS (POOL_NAME) VALUES ('forged')",
        "DELETE FROM AUD_TASK_RUN_LOG",
        "UPDATE AUD_PIPELINES_RUN_LOG SET STATUS = 'SUCCESS'",
        # The ledger: a "future" migration would make every migrate refuse, a removed one
        # would apply an old file again.
        "INSERT INTO SCHEMA_MIGRATIONS (STREAM, SCOPE, VERSION, NAME, CHECKSUM, APPLIED_AT, "
        "APPLIED_BY) VALUES ('ENGINE', 'engine', 9999, '9999_future.sql', 'x', now(), 'me')",
        "DELETE FROM SCHEMA_MIGRATIONS WHERE VERSION = (SELECT max(VERSION) FROM SCHEMA_MIGRATIONS)",
        "UPDATE SCHEMA_MIGRATIONS SET CHECKSUM = 'forged'",
    ],
)
def test_every_write_of_a_dml_login_is_refused_whatever_it_claims(
    cluster: Cluster, statement: str
) -> None:
    ledger = cluster.scalar(LEDGER)
    intruder = cluster.login("etl_craft_intruder", *DML_ON_EVERYTHING)
    with cluster.connect_as(intruder) as conn:
        conn.execute(FORGED_ACTOR)
        with pytest.raises(psycopg.errors.ProgrammingError, match="writer role") as refused:
            conn.execute(statement)
    assert refused.value.sqlstate == GUARD_SQLSTATE
    assert cluster.scalar("SELECT count(*) FROM CFG_POOLS WHERE POOL_NAME = 'forged'") == 0
    assert cluster.scalar("SELECT count(*) FROM AUD_TASK_RUN_LOG") == 1
    assert cluster.scalar(LEDGER) == ledger


def test_a_forged_actor_does_not_let_a_dml_login_truncate(cluster: Cluster) -> None:
    intruder = cluster.login("etl_craft_intruder", *DML_ON_EVERYTHING)
    with cluster.connect_as(intruder) as conn:
        conn.execute(FORGED_ACTOR)
        with pytest.raises(psycopg.errors.ProgrammingError, match="TRUNCATE is refused") as refused:
            conn.execute("TRUNCATE CFG_API_TOKENS, AUD_UI_SESSIONS")
    assert refused.value.sqlstate == GUARD_SQLSTATE
    assert cluster.scalar("SELECT count(*) FROM CFG_API_TOKENS") == 1


def test_truncate_is_refused_to_etl_craft_itself(cluster: Cluster) -> None:
    db = EngineDB(cluster.url)
    try:
        with pytest.raises(WriteGuardError, match="TRUNCATE is refused"):
            with db.transaction(TESTER) as conn:
                execute(conn, "TRUNCATE AUD_GATE_WAITS")
    finally:
        db.dispose()
    assert cluster.scalar("SELECT count(*) FROM AUD_GATE_WAITS") == 1


def test_a_login_in_the_printed_writer_role_writes_attributed_to_its_actor(
    cluster: Cluster,
) -> None:
    member = cluster.login("etl_craft_service", f"GRANT {cluster.writer_role} TO {{role}}")
    db = cluster.engine_as(member)
    try:
        with db.transaction(TESTER) as conn:
            execute(conn, "INSERT INTO CFG_POOLS (POOL_NAME) VALUES ('by_member')")
            execute(conn, "UPDATE AUD_GATE_WAITS SET WAIT_UNTIL = etl_craft_now()")
    finally:
        db.dispose()
    actor = cluster.scalar(
        "SELECT ACTOR FROM AUD_METADATA_CHANGES WHERE TABLE_NAME = 'CFG_POOLS' "
        "AND AFTER_JSON LIKE '%by_member%'"
    )
    assert actor == TESTER.name


def test_a_login_in_the_printed_reader_role_reads_and_never_writes(cluster: Cluster) -> None:
    reader = cluster.login("etl_craft_report", f"GRANT {cluster.reader_role} TO {{role}}")
    with cluster.connect_as(reader) as conn:
        row = conn.execute("SELECT count(*) FROM CFG_API_TOKENS").fetchone()
        assert row == (1,)
        conn.execute(FORGED_ACTOR)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO CFG_POOLS (POOL_NAME) VALUES ('by_reader')")
    assert cluster.scalar("SELECT count(*) FROM CFG_POOLS WHERE POOL_NAME = 'by_reader'") == 0


@pytest.mark.parametrize(
    "query",
    [
        "SELECT PARAMETER_VALUE FROM CFG_PIPELINE_PARAMETERS",
        "SELECT PARAMETER_VALUE FROM CFG_TASK_PARAMETERS",
        "SELECT * FROM CFG_PIPELINE_PARAMETERS",
        "SELECT TOKEN_SHA256 FROM CFG_API_TOKENS",
        "SELECT PASSWORD_HASH FROM CFG_USERS",
        "SELECT AFTER_JSON FROM AUD_METADATA_CHANGES",
        "SELECT BEFORE_JSON FROM AUD_METADATA_CHANGES",
    ],
)
def test_the_printed_reader_role_reads_no_parameter_value_and_no_token_hash(
    cluster: Cluster, query: str
) -> None:
    reader = cluster.login("etl_craft_report", f"GRANT {cluster.reader_role} TO {{role}}")
    with cluster.connect_as(reader) as conn:
        assert conn.execute(
            "SELECT p.PARAMETER_NAME, t.NAME, t.ROLE, c.TABLE_NAME, c.ROW_KEY "
            "FROM CFG_PIPELINE_PARAMETERS p, CFG_API_TOKENS t, AUD_METADATA_CHANGES c"
        ).fetchone()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(query)
