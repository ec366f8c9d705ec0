"""etl-craft doctor: every check reported, whichever fail; exit 1 on any FAIL."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg import sql

from etl_craft.config.rules import TlsMode
from etl_craft.core.errors import ExitCode
from tests.fixtures.databases import unique_name
from tests.integration.alerts.relay import Mailbox, relay
from tests.integration.cli.conftest import CONNECTOR, RING, Site, checks_by_name

EVERY_CHECK = [
    "actor",
    "config",
    "dependency-gates",
    "engine-db",
    "schema",
    "project-migrations",
    "write-guards",
    "engine-file-mode",
    "grants",
    "connections",
    "pipelines",
    "warehouse",
    "smtp",
    "cloning",
]
ENGINE_DB_CHECKS = EVERY_CHECK[4:11]
UNREACHABLE = "postgresql://nobody@127.0.0.1:1/nothing"


def test_doctor_after_init_db_passes_and_lists_every_check(site: Site) -> None:
    assert site.run("init-db").returncode == 0

    done = site.run("doctor")

    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for name in EVERY_CHECK:
        assert any(line.split()[1:2] == [name] for line in lines), f"{name} not in {lines}"
    assert "FAIL" not in done.stdout
    assert "etl-craft is ready" in done.stdout


def test_doctor_json_is_a_document_of_its_kind(site: Site) -> None:
    site.run("init-db")

    code, document = site.json("doctor")

    assert code == 0
    assert document["schema"] == "etl-craft/doctor/1"
    assert document["healthy"] is True
    assert [check["name"] for check in document["checks"]] == EVERY_CHECK
    statuses = {check["name"]: check["status"] for check in document["checks"]}
    assert statuses["engine-db"] == "PASS"
    assert statuses["write-guards"] == "PASS"
    dialect_only = ("grants", "connections") if site.dialect == "sqlite" else ("engine-file-mode",)
    assert {statuses[name] for name in dialect_only} == {"SKIP"}


def test_doctor_on_an_unreachable_engine_db_fails_that_check_and_reports_the_rest(
    sqlite_site: Site,
) -> None:
    done = sqlite_site.run("doctor", ETL_CRAFT_ENGINE_URL=UNREACHABLE)
    code, document = sqlite_site.json("doctor", ETL_CRAFT_ENGINE_URL=UNREACHABLE)

    assert done.returncode == ExitCode.FAILURE
    assert any(line.startswith("FAIL  engine-db") for line in done.stdout.splitlines())
    assert code == ExitCode.FAILURE
    checks = checks_by_name(document)
    assert list(checks) == EVERY_CHECK
    assert checks["engine-db"]["status"] == "FAIL"
    assert "127.0.0.1" in checks["engine-db"]["detail"]
    assert checks["actor"]["status"] == checks["config"]["status"] == "PASS"
    assert {checks[name]["status"] for name in ENGINE_DB_CHECKS} == {"SKIP"}
    assert "unreachable" in checks["schema"]["detail"]


def test_doctor_with_a_broken_config_still_checks_the_engine_db(pg_site: Site) -> None:
    pg_site.run("init-db")
    (pg_site.project / "craft-connector.yml").write_text("Engine:\n  path: engine.db\n")

    code, document = pg_site.json("doctor")

    assert code == ExitCode.FAILURE
    checks = checks_by_name(document)
    assert checks["config"]["status"] == "FAIL"
    assert "section Warehouse is missing" in checks["config"]["detail"]
    assert checks["engine-db"]["status"] == "PASS"
    assert checks["write-guards"]["status"] == "PASS"
    assert checks["project-migrations"]["status"] == "SKIP"


def test_doctor_before_init_db_fails_on_the_schema(pg_site: Site) -> None:
    code, document = pg_site.json("doctor")

    assert code == ExitCode.FAILURE
    checks = checks_by_name(document)
    assert checks["schema"]["status"] == "FAIL"
    assert checks["schema"]["remedy"] == "run etl-craft init-db"
    assert checks["write-guards"]["status"] == "SKIP"


def test_doctor_warns_of_pending_project_migrations_naming_them(site: Site) -> None:
    site.run("init-db")
    site.write_migration("0001_orders.sql", "SELECT 1;")

    code, document = site.json("doctor")

    assert code == 0
    pending = checks_by_name(document)["project-migrations"]
    assert pending["status"] == "WARN"
    assert "0001_orders.sql" in pending["detail"]


@pytest.mark.parametrize("policy", ["warn", "off"])
def test_doctor_warns_when_dependency_gates_are_not_enforced(site: Site, policy: str) -> None:
    site.run("init-db")
    config = site.project / "craft-connector.yml"
    written = config.read_text().replace(
        "Orchestration:\n", f"Orchestration:\n  dependency_gates: {policy}\n", 1
    )
    config.write_text(written)

    code, document = site.json("doctor")

    assert code == 0
    gates = checks_by_name(document)["dependency-gates"]
    assert gates["status"] == "WARN"
    assert f"dependency_gates is {policy}" in gates["detail"]
    assert "enforce" in gates["remedy"]


def test_doctor_fails_naming_a_dropped_write_guard(sqlite_site: Site) -> None:
    sqlite_site.run("init-db")
    sqlite_site.execute("DROP TRIGGER etl_craft_guard_insert_AUD_ACTIONS")
    sqlite_site.execute("DROP TRIGGER etl_craft_watermark_update_AUD_TASK_ATTEMPTS")

    code, document = sqlite_site.json("doctor")

    assert code == ExitCode.FAILURE
    guards = checks_by_name(document)["write-guards"]
    assert guards["status"] == "FAIL"
    assert "AUD_ACTIONS has 2 of 3 enabled guard triggers" in guards["detail"]
    # A clone would miss every change of an attempt after its insert.
    assert "AUD_TASK_ATTEMPTS has 1 of 2 enabled watermark triggers" in guards["detail"]
    assert sqlite_site.run("init-db").returncode == 0
    assert sqlite_site.json("doctor")[0] == 0


def test_doctor_warns_when_others_may_write_the_sqlite_file(sqlite_site: Site) -> None:
    sqlite_site.run("init-db")
    (sqlite_site.project / "engine.db").chmod(0o666)

    code, document = sqlite_site.json("doctor")

    assert code == 0
    mode = checks_by_name(document)["engine-file-mode"]
    assert mode["status"] == "WARN"
    assert "chmod go-w" in mode["remedy"]


def doctor_with_a_login_granted(pg_site: Site, grant: str) -> tuple[str, int, dict[str, Any]]:
    """Doctor's answer while a login outside etl-craft's roles holds ``grant`` (GRANT ... TO)."""
    pg_site.run("init-db")
    role = unique_name("etl_craft_intruder")
    with psycopg.connect(pg_site.engine_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        conn.execute(sql.SQL(f"GRANT {grant} TO {{}}").format(sql.Identifier(role)))
        try:
            code, document = pg_site.json("doctor")
        finally:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
    return role, code, document


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("grant", "held", "revoke"),
    [
        ("INSERT ON AUD_ACTIONS", "INSERT on AUD_ACTIONS", "INSERT ON AUD_ACTIONS"),
        (
            "DELETE ON SCHEMA_MIGRATIONS",
            "DELETE on SCHEMA_MIGRATIONS",
            "DELETE ON SCHEMA_MIGRATIONS",
        ),
        (
            "UPDATE ON SEQUENCE cfg_api_tokens_token_id_seq",
            "UPDATE on SEQUENCE CFG_API_TOKENS_TOKEN_ID_SEQ",
            "UPDATE ON SEQUENCE CFG_API_TOKENS_TOKEN_ID_SEQ",
        ),
    ],
)
def test_doctor_fails_when_another_login_may_write_a_table_the_ledger_or_a_sequence(
    pg_site: Site, grant: str, held: str, revoke: str
) -> None:
    role, code, document = doctor_with_a_login_granted(pg_site, grant)

    assert code == ExitCode.FAILURE
    grants = checks_by_name(document)["grants"]
    assert grants["status"] == "FAIL"
    assert f"{role} holds {held}" in grants["detail"]
    assert f"login {role} may {held.replace(' on ', ' ')}" in grants["detail"]
    assert f'REVOKE {revoke} FROM "{role}";' in grants["remedy"]


@pytest.mark.postgres
def test_doctor_fails_naming_a_disabled_guard_trigger(pg_site: Site) -> None:
    pg_site.run("init-db")
    pg_site.execute("ALTER TABLE AUD_ACTIONS DISABLE TRIGGER etl_craft_guard_writer")

    code, document = pg_site.json("doctor")

    assert code == ExitCode.FAILURE
    guards = checks_by_name(document)["write-guards"]
    assert guards["status"] == "FAIL"
    assert "trigger etl_craft_guard_writer on AUD_ACTIONS is disabled" in guards["detail"]
    assert pg_site.run("init-db").returncode == 0
    assert checks_by_name(pg_site.json("doctor")[1])["write-guards"]["status"] == "PASS"


@pytest.mark.postgres
def test_doctor_names_a_login_that_may_write_through_a_role_it_belongs_to(pg_site: Site) -> None:
    pg_site.run("init-db")
    group, login = unique_name("etl_craft_group"), unique_name("etl_craft_login")
    with psycopg.connect(pg_site.engine_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {}").format(sql.Identifier(group)))
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN IN ROLE {}").format(*map(sql.Identifier, (login, group)))
        )
        conn.execute(sql.SQL("GRANT DELETE ON CFG_TASKS TO {}").format(sql.Identifier(group)))
        try:
            code, document = pg_site.json("doctor")
        finally:
            for role in (login, group):
                conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
                conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))

    assert code == ExitCode.FAILURE
    grants = checks_by_name(document)["grants"]
    assert f"login {login} may DELETE CFG_TASKS" in grants["detail"]
    assert f'REVOKE DELETE ON CFG_TASKS FROM "{group}";' in grants["remedy"]


def test_doctor_is_not_ready_while_a_pipeline_has_a_blocking_finding(sqlite_site: Site) -> None:
    sqlite_site.run("init-db")
    sqlite_site.write_migration("0001_ring.sql", RING)
    assert sqlite_site.run("migrate", "--no-validate").returncode == 0

    code, document = sqlite_site.json("doctor")

    assert code == ExitCode.FAILURE
    assert document["healthy"] is False
    pipelines = checks_by_name(document)["pipelines"]
    assert pipelines["status"] == "FAIL"
    assert "pipeline ring: cycle" in pipelines["detail"]
    assert "first -> second -> first" in pipelines["detail"]
    assert "not ready" in sqlite_site.run("doctor").stdout


def _connect(site: Site, warehouse: str) -> None:
    duckdb_section = "Warehouse:\n  type: duckdb\n  path: warehouse.duckdb\n"
    written = CONNECTOR.replace(duckdb_section, warehouse)
    (site.project / "craft-connector.yml").write_text(written)


def test_doctor_fails_a_postgresql_warehouse_on_a_closed_port(sqlite_site: Site) -> None:
    sqlite_site.run("init-db")
    _connect(sqlite_site, f"Warehouse:\n  type: postgresql\n  url: {UNREACHABLE}\n")

    code, document = sqlite_site.json("doctor")
    done = sqlite_site.run("doctor")

    assert code == ExitCode.FAILURE
    warehouse = checks_by_name(document)["warehouse"]
    assert warehouse["status"] == "FAIL"
    assert "host 127.0.0.1, port 1" in warehouse["detail"]
    assert "refused" in warehouse["detail"].lower()  # the driver's reason
    assert "Warehouse section" in warehouse["remedy"]
    assert checks_by_name(document)["engine-db"]["status"] == "PASS"
    assert "etl-craft is ready" not in done.stdout


@pytest.mark.postgres
def test_doctor_passes_a_postgresql_warehouse_that_answers(
    sqlite_site: Site, pg_admin_url: str
) -> None:
    sqlite_site.run("init-db")
    _connect(sqlite_site, f"Warehouse:\n  type: postgresql\n  url: {pg_admin_url}\n")

    code, document = sqlite_site.json("doctor")

    warehouse = checks_by_name(document)["warehouse"]
    assert (code, warehouse["status"]) == (0, "PASS"), warehouse
    assert warehouse["detail"].startswith("PostgreSQL ")


def test_doctor_fails_a_duckdb_warehouse_that_is_no_database(sqlite_site: Site) -> None:
    sqlite_site.run("init-db")
    (sqlite_site.project / "warehouse.duckdb").write_text("not a database\n")

    code, document = sqlite_site.json("doctor")

    assert code == ExitCode.FAILURE
    warehouse = checks_by_name(document)["warehouse"]
    assert warehouse["status"] == "FAIL"
    assert "warehouse.duckdb can't be opened" in warehouse["detail"]


def test_doctor_passes_a_duckdb_warehouse_the_first_run_creates(sqlite_site: Site) -> None:
    sqlite_site.run("init-db")

    code, document = sqlite_site.json("doctor")

    assert code == 0
    assert "does not exist yet" in checks_by_name(document)["warehouse"]["detail"]
    assert not (sqlite_site.project / "warehouse.duckdb").exists()
    assert checks_by_name(document)["smtp"]["status"] == "SKIP"


def test_doctor_checks_the_smtp_relay(sqlite_site: Site) -> None:
    sqlite_site.run("init-db")
    email = "Email:\n  host: 127.0.0.1\n  port: {port}\n  tls_mode: none\n  from_address: etl@example.com\n"
    with relay(Mailbox(), tls=TlsMode.NONE) as port:
        (sqlite_site.project / "craft-connector.yml").write_text(
            CONNECTOR + email.format(port=port)
        )
        answered = sqlite_site.json("doctor")
    closed = sqlite_site.json("doctor")

    assert answered[0] == 0
    assert checks_by_name(answered[1])["smtp"]["status"] == "PASS"
    assert closed[0] == ExitCode.FAILURE
    smtp = checks_by_name(closed[1])["smtp"]
    assert smtp["status"] == "FAIL"
    assert f"127.0.0.1:{port} (none) does not answer" in smtp["detail"]
