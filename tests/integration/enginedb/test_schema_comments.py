"""Every Engine DB table and column carries a comment: the schema reference reads them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from etl_craft.enginedb.connection import EngineDB
from tests.fixtures.metadata import execute


@pytest.fixture(scope="module")
def pg_db(pg_engine_url: str) -> Iterator[EngineDB]:
    db = EngineDB(pg_engine_url)
    yield db
    db.dispose()


def test_every_table_and_column_has_a_comment(pg_db: EngineDB) -> None:
    with pg_db.read() as conn:
        tables = (
            execute(
                conn,
                "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace "
                "AND c.relkind = 'r'",
            )
            .scalars()
            .all()
        )
        bare_tables = (
            execute(
                conn,
                "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace "
                "AND c.relkind = 'r' AND obj_description(c.oid, 'pg_class') IS NULL",
            )
            .scalars()
            .all()
        )
        bare_columns = (
            execute(
                conn,
                "SELECT c.relname || '.' || a.attname FROM pg_class c JOIN pg_attribute a "
                "ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
                "WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' "
                "AND col_description(c.oid, a.attnum) IS NULL",
            )
            .scalars()
            .all()
        )
    assert len(tables) == 35
    assert (bare_tables, bare_columns) == ([], [])
