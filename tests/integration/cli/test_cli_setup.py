"""etl-craft setup --print-grants: statements for the writer and reader roles, never run."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import ExitCode
from tests.integration.cli.conftest import Site


@pytest.mark.postgres
def test_print_grants_names_the_roles_the_schema_the_owner_and_the_logins(pg_site: Site) -> None:
    pg_site.run("init-db")

    done = pg_site.run("setup", "--print-grants", "--writer-login", "svc", "--reader-login", "bi")

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "CREATE ROLE etl_craft_writer NOLOGIN;" in lines
    assert "CREATE ROLE etl_craft_reader NOLOGIN;" in lines
    assert (
        'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "public" TO etl_craft_writer;'
        in lines
    )
    assert 'GRANT SELECT ON ALL TABLES IN SCHEMA "public" TO etl_craft_reader;' in lines
    assert 'GRANT etl_craft_writer TO "svc";' in lines
    assert 'GRANT etl_craft_reader TO "bi";' in lines
    assert not any("TRUNCATE" in line for line in lines if not line.startswith("--"))
    assert pg_site.query("SELECT count(*) AS n FROM pg_roles WHERE rolname = 'svc'")[0]["n"] == 0


@pytest.mark.postgres
def test_print_grants_as_json_is_a_document_of_its_kind(pg_site: Site) -> None:
    pg_site.run("init-db")

    code, document = pg_site.json("setup", "--print-grants", "--writer-role", "etl_w")

    assert code == 0
    assert document["schema"] == "etl-craft/grants/1"
    assert document["writer_role"] == "etl_w"
    assert document["statements"][0] == "CREATE ROLE etl_w NOLOGIN;"


def test_print_grants_on_sqlite_says_there_are_no_logins(sqlite_site: Site) -> None:
    sqlite_site.run("init-db")

    done = sqlite_site.run("setup", "--print-grants")

    assert done.returncode == ExitCode.CONFIGURATION
    assert "is SQLite, which has no logins to grant to" in done.stderr


def test_a_writer_role_that_is_no_plain_name_is_refused_naming_it(sqlite_site: Site) -> None:
    done = sqlite_site.run("setup", "--print-grants", "--writer-role", 'x"; DROP TABLE y; --')

    assert done.returncode == ExitCode.CONFIGURATION
    assert "is not a plain PostgreSQL role name" in done.stderr


@pytest.mark.postgres
def test_the_configured_writer_role_is_the_one_the_guards_admit(pg_site: Site) -> None:
    connector = pg_site.project / "craft-connector.yml"
    connector.write_text(
        connector.read_text().replace(
            "  path: engine.db\n", "  path: engine.db\n  writer_role: etl_svc\n"
        )
    )
    assert pg_site.run("init-db").returncode == 0

    code, document = pg_site.json("setup", "--print-grants")
    arguments = pg_site.query(
        "SELECT encode(tgargs, 'escape') AS args FROM pg_trigger "
        "WHERE tgname = 'etl_craft_guard_writer' AND tgrelid = 'cfg_tasks'::regclass"
    )

    assert code == 0
    assert document["writer_role"] == "etl_svc"
    assert arguments[0]["args"].startswith("etl_svc\\000")


def test_a_writer_role_in_the_configuration_must_be_a_plain_name(sqlite_site: Site) -> None:
    connector = sqlite_site.project / "craft-connector.yml"
    connector.write_text(
        connector.read_text().replace(
            "  path: engine.db\n", "  path: engine.db\n  writer_role: Etl-Svc\n"
        )
    )

    done = sqlite_site.run("init-db")

    assert done.returncode == ExitCode.CONFIGURATION
    assert "Engine.writer_role" in done.stderr
    assert "expected a PostgreSQL role name" in done.stderr


def test_init_db_creates_the_sqlite_engine_db_private_to_its_owner(sqlite_site: Site) -> None:
    assert sqlite_site.run("init-db").returncode == 0

    mode = (sqlite_site.project / "engine.db").stat().st_mode & 0o777

    assert mode == 0o600
