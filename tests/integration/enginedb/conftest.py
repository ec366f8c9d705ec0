"""A pooled Engine DB on a fresh PostgreSQL database, for the tests of this folder that need one
of their own (a test file may define its own ``engine`` with other settings)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from etl_craft.enginedb.connection import EngineDB


@pytest.fixture
def engine(pg_fresh_url: str) -> Iterator[EngineDB]:
    db = EngineDB(pg_fresh_url)
    yield db
    db.dispose()
