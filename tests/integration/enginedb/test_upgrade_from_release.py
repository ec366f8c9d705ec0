"""An Engine DB written by an earlier release, with its runs in it, migrates to today's schema.

The fixtures are dumps of the Engine DB that etl-craft 0.1.0's demo left (PostgreSQL: pg_dump's
plain SQL; SQLite: the database's SQL dump). Migrating one must keep every row and end with the
same catalog as an Engine DB built from today's schema.sql.
"""

from __future__ import annotations

import gzip
import re
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from etl_craft.core.actor import SYSTEM
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.migrations import (
    ENGINE_SCOPE,
    engine_files,
    initialize,
    migrate_engine,
    schema_version,
)
from tests.fixtures.databases import create_database, drop_database, unique_name
from tests.fixtures.metadata import execute
from tests.integration.enginedb.test_migrations import _catalog

FIXTURES = Path(__file__).parents[2] / "fixtures" / "upgrade"
RELEASE = "0.1.0"


def _dump(dialect: str) -> str:
    return gzip.decompress((FIXTURES / f"engine-{RELEASE}.{dialect}.sql.gz").read_bytes()).decode()


@pytest.fixture(params=["sqlite", "postgresql"])
def released(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EngineDB]:
    """An Engine DB as the release left it."""
    if request.param == "sqlite":
        path = tmp_path / "engine.db"
        with sqlite3.connect(path) as conn:
            conn.executescript(_dump("sqlite"))
        conn.close()
        db = EngineDB(f"sqlite:///{path}")
        yield db
        db.dispose()
        return
    admin = str(request.getfixturevalue("pg_admin_url"))
    name = unique_name("etl_craft_released")
    url = create_database(admin, name)
    plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    subprocess.run(
        ["psql", "--quiet", "--set=ON_ERROR_STOP=1", f"--dbname={plain}"],
        input=_dump("postgresql"),
        text=True,
        check=True,
        capture_output=True,
    )
    db = EngineDB(url)
    yield db
    db.dispose()
    drop_database(admin, name)


# pg_dump writes `x IN (...)` back as an array of casts that PostgreSQL then renders another way:
# the same condition, spelled differently.
_SPELLING = re.compile(r"::character varying|::text\[\]|::text|[()\s]")


def _comparable(catalog: list[list[tuple[object, ...]]]) -> list[list[tuple[object, ...]]]:
    return [
        [tuple(_SPELLING.sub("", v) if isinstance(v, str) else v for v in row) for row in part]
        for part in catalog
    ]


def _rows(db: EngineDB) -> dict[str, int]:
    """Every etl-craft table's row count."""
    with db.read() as conn:
        if db.dialect == "sqlite":
            names = execute(
                conn,
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '%\\_%' "
                "ESCAPE '\\' AND name NOT LIKE 'sqlite_%'",
            ).scalars()
        else:
            names = execute(
                conn,
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
            ).scalars()
        tables = sorted(str(name).upper() for name in names)
        return {
            table: int(execute(conn, f"SELECT count(*) FROM {table}").scalar_one())
            for table in tables
        }


def test_an_engine_db_of_the_previous_release_migrates_with_its_history(
    released: EngineDB, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    before = _rows(released)
    assert before["AUD_PIPELINES_RUN_LOG"] > 0
    assert before["AUD_TASK_ATTEMPTS"] > 0
    with released.read() as conn:
        applied_before = execute(
            conn, "SELECT count(*) FROM SCHEMA_MIGRATIONS WHERE SCOPE = :s", s=ENGINE_SCOPE
        ).scalar_one()
    assert applied_before < schema_version(released.dialect)

    report = migrate_engine(released, SYSTEM)

    files = [file.name for file in engine_files(released.dialect)]
    assert report.applied == tuple(files[applied_before:])
    after = _rows(released)
    # Every table the release had keeps its rows; a table added since starts empty; the
    # migration ledger records what was applied.
    assert after.pop("SCHEMA_MIGRATIONS") == before.pop("SCHEMA_MIGRATIONS") + len(report.applied)
    assert {table: after[table] for table in before} == before
    assert all(after[table] == 0 for table in after.keys() - before.keys())

    if released.dialect == "sqlite":
        fresh = EngineDB(f"sqlite:///{tmp_path / 'fresh.db'}")
    else:
        admin = str(request.getfixturevalue("pg_admin_url"))
        name = unique_name("etl_craft_fresh")
        fresh = EngineDB(create_database(admin, name))
    try:
        initialize(fresh, SYSTEM, project_code="default", timezone="UTC")
        assert _comparable(_catalog(released)) == _comparable(_catalog(fresh))
    finally:
        fresh.dispose()
        if released.dialect == "postgresql":
            drop_database(admin, name)
