"""Worker fixtures: a PostgreSQL Engine DB of each test's own, projects, and started processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from etl_craft.enginedb.connection import EngineDB
from tests.chaos.proxy import engine_proxy, proxied_project
from tests.fixtures.processes import pg_project, processes

__all__ = ["db", "engine_proxy", "pg_project", "processes", "proxied_project"]


@pytest.fixture
def db(pg_fresh_url: str) -> Iterator[EngineDB]:
    engine = EngineDB(pg_fresh_url)
    yield engine
    engine.dispose()
