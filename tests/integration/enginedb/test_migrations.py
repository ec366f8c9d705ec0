"""The migration runner: schema.sql and the migrations agree; files are immutable once applied."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from etl_craft.core.actor import SYSTEM
from etl_craft.core.errors import MigrationError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.migrations import (
    ENGINE_SCOPE,
    engine_files,
    initialize,
    migrate_engine,
    migrate_project,
    schema_version,
)
from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.metadata import TESTER, execute

POSTGRES_CATALOG = [
    "SELECT table_name, column_name, data_type, character_maximum_length, is_nullable, "
    "column_default FROM information_schema.columns WHERE table_schema = 'public' "
    "ORDER BY 1, 2",
    "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
    "WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2",
    "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' "
    "ORDER BY 1, 2",
    "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger "
    "WHERE NOT tgisinternal ORDER BY 1, 2",
    "SELECT proname, prosrc FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY 1",
    "SELECT c.relname, a.attname, col_description(c.oid, a.attnum) FROM pg_class c "
    "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 "
    "WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' ORDER BY 1, 2",
]
SQLITE_CATALOG = [
    "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
    "ORDER BY type, name"
]


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / unique_name('engine')}.db"
        return
    admin = str(request.getfixturevalue("pg_admin_url"))
    name = unique_name("etl_craft_migrations")
    yield create_database(admin, name)
    drop_database(admin, name)


def _catalog(db: EngineDB) -> list[list[tuple[object, ...]]]:
    queries = POSTGRES_CATALOG if db.dialect == "postgresql" else SQLITE_CATALOG
    with db.read() as conn:
        return [[tuple(row) for row in execute(conn, sql)] for sql in queries]


def _second_database(url: str, tmp_path: Path, admin: str | None) -> str:
    if url.startswith("sqlite"):
        return f"sqlite:///{tmp_path / 'from_migrations.db'}"
    assert admin is not None
    return create_database(admin, unique_name("etl_craft_from_migrations"))


def test_schema_sql_and_migrations_build_identical_catalogs(
    empty_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    admin = None if empty_url.startswith("sqlite") else str(request.getfixturevalue("pg_admin_url"))
    other_url = _second_database(empty_url, tmp_path, admin)
    from_schema, from_migrations = EngineDB(empty_url), EngineDB(other_url)
    try:
        initialize(from_schema, SYSTEM, project_code="default", timezone="UTC")
        report = migrate_engine(from_migrations, SYSTEM)
        assert report.applied == tuple(file.name for file in engine_files(from_migrations.dialect))
        schema_catalog, migrations_catalog = _catalog(from_schema), _catalog(from_migrations)
        assert sum(len(part) for part in schema_catalog) > (100 if admin is None else 500)
        assert schema_catalog == migrations_catalog
    finally:
        from_schema.dispose()
        from_migrations.dispose()
        if admin is not None:
            drop_database(admin, other_url.rsplit("/", 1)[1])


def test_engine_migrations_are_idempotent(empty_url: str) -> None:
    db = EngineDB(empty_url)
    try:
        first = initialize(db, SYSTEM, project_code="default", timezone="UTC")
        second = initialize(db, SYSTEM, project_code="default", timezone="UTC")
        third = migrate_engine(db, SYSTEM)
        assert first.applied == ("schema.sql",)
        assert second.applied == third.applied == ()
        assert third.already_applied == schema_version(db.dialect)
        with db.read() as conn:
            projects = execute(conn, "SELECT count(*) FROM CFG_PROJECTS").scalar_one()
            ledger = execute(
                conn, "SELECT count(*) FROM SCHEMA_MIGRATIONS WHERE SCOPE = :s", s=ENGINE_SCOPE
            ).scalar_one()
        assert (projects, ledger) == (1, schema_version(db.dialect))
    finally:
        db.dispose()


PIPELINE_MIGRATION = """
INSERT INTO CFG_PIPELINES (PROJECT_ID, PIPELINE_CODE)
SELECT PROJECT_ID, 'orders' FROM CFG_PROJECTS WHERE PROJECT_CODE = 'default';
INSERT INTO CFG_TASKS (PIPELINE_ID, TASK_CODE, HANDLER)
SELECT PIPELINE_ID, 'load_orders', 'SQL' FROM CFG_PIPELINES WHERE PIPELINE_CODE = 'orders';
INSERT INTO CFG_TASK_PARAMETERS (TASK_ID, PARAMETER_NAME, PARAMETER_VALUE)
SELECT TASK_ID, 'ACTION', 'APPEND_TABLE' FROM CFG_TASKS WHERE TASK_CODE = 'load_orders';
"""
CHANGE_MIGRATION = """
UPDATE CFG_TASK_PARAMETERS SET PARAMETER_VALUE = 'SCD1_MERGE'
 WHERE PARAMETER_NAME = 'ACTION'
   AND TASK_ID = (SELECT TASK_ID FROM CFG_TASKS WHERE TASK_CODE = 'load_orders');
UPDATE CFG_PIPELINES SET ACTIVE_FLAG = 'N' WHERE PIPELINE_CODE = 'orders';
"""


@pytest.fixture
def fresh_db(empty_url: str) -> Iterator[EngineDB]:
    db = EngineDB(empty_url)
    initialize(db, SYSTEM, project_code="default", timezone="UTC")
    yield db
    db.dispose()


def test_a_project_migration_records_before_after_actor_and_file(
    fresh_db: EngineDB, tmp_path: Path
) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_orders.sql").write_text(PIPELINE_MIGRATION)
    (folder / "0002_merge_orders.sql").write_text(CHANGE_MIGRATION)
    report = migrate_project(fresh_db, TESTER, project_code="default", folder=folder)
    assert report.applied == ("0001_orders.sql", "0002_merge_orders.sql")
    with fresh_db.read() as conn:
        rows = execute(
            conn,
            "SELECT TABLE_NAME, OPERATION, BEFORE_JSON, AFTER_JSON, ACTOR, ACTOR_KIND, "
            "MIGRATION FROM AUD_METADATA_CHANGES WHERE MIGRATION = '0002_merge_orders.sql' "
            "ORDER BY CHANGE_ID",
        ).all()
    changed = {(row[0], row[1]): row for row in rows}
    parameter = changed[("CFG_TASK_PARAMETERS", "UPDATE")]
    before, after = json.loads(parameter[2]), json.loads(parameter[3])
    assert (before["parameter_value"], after["parameter_value"]) == ("APPEND_TABLE", "SCD1_MERGE")
    assert after["updated_by"] == TESTER.name
    assert parameter[4:] == (TESTER.name, "HUMAN", "0002_merge_orders.sql")
    pipeline = changed[("CFG_PIPELINES", "UPDATE")]
    assert (json.loads(pipeline[2])["active_flag"], json.loads(pipeline[3])["active_flag"]) == (
        "Y",
        "N",
    )
    assert len(rows) == 2


def test_a_changed_applied_migration_is_refused(fresh_db: EngineDB, tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    applied = folder / "0001_orders.sql"
    applied.write_text(PIPELINE_MIGRATION)
    migrate_project(fresh_db, TESTER, project_code="default", folder=folder)
    applied.write_text(PIPELINE_MIGRATION.replace("orders", "sales"))
    (folder / "0002_more.sql").write_text(CHANGE_MIGRATION)
    with pytest.raises(
        MigrationError, match=r"migration 0001_orders.sql changed after it was applied"
    ):
        migrate_project(fresh_db, TESTER, project_code="default", folder=folder)
    with fresh_db.read() as conn:
        active = execute(conn, "SELECT ACTIVE_FLAG FROM CFG_PIPELINES").scalars().all()
    assert active == ["Y"]


def test_a_failing_migration_changes_nothing(fresh_db: EngineDB, tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_broken.sql").write_text(
        PIPELINE_MIGRATION + "\nINSERT INTO CFG_TASKS (TASK_CODE) VALUES ('9 not a code');\n"
    )
    with pytest.raises(
        MigrationError, match=r"0001_broken.sql (line \d+ )?failed.*The file was rolled back"
    ):
        migrate_project(fresh_db, TESTER, project_code="default", folder=folder)
    with fresh_db.read() as conn:
        assert execute(conn, "SELECT count(*) FROM CFG_PIPELINES").scalar_one() == 0
        assert (
            execute(
                conn, "SELECT count(*) FROM SCHEMA_MIGRATIONS WHERE STREAM = 'PROJECT'"
            ).scalar_one()
            == 0
        )


def test_a_reserved_table_created_by_a_project_is_guarded(
    fresh_db: EngineDB, tmp_path: Path
) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_table.sql").write_text(
        "CREATE TABLE AUD_PROJECT_NOTES (NOTE_ID INTEGER PRIMARY KEY);"
    )
    migrate_project(fresh_db, TESTER, project_code="default", folder=folder)
    with fresh_db.engine.connect() as unmarked:
        with pytest.raises(DBAPIError, match="AUD_PROJECT_NOTES is written only by etl-craft"):
            unmarked.execute(text("INSERT INTO AUD_PROJECT_NOTES (NOTE_ID) VALUES (1)"))
    with fresh_db.transaction(TESTER) as conn:
        execute(conn, "INSERT INTO AUD_PROJECT_NOTES (NOTE_ID) VALUES (1)")


def test_misnamed_and_duplicate_versions_are_refused(fresh_db: EngineDB, tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "orders.sql").write_text(PIPELINE_MIGRATION)
    with pytest.raises(MigrationError, match="orders.sql .* is not named NNNN_description.sql"):
        migrate_project(fresh_db, TESTER, project_code="default", folder=folder)
    (folder / "orders.sql").rename(folder / "0001_orders.sql")
    (folder / "0001_again.sql").write_text(CHANGE_MIGRATION)
    with pytest.raises(MigrationError, match="share version 1"):
        migrate_project(fresh_db, TESTER, project_code="default", folder=folder)
