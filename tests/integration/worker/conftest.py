"""Worker fixtures: a PostgreSQL Engine DB of each test's own, projects, and started processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from etl_craft.enginedb.connection import EngineDB
from tests.chaos.harness import Processes
from tests.fixtures.projects import ProjectOnDisk, make_project


@pytest.fixture
def db(pg_fresh_url: str) -> Iterator[EngineDB]:
    engine = EngineDB(pg_fresh_url)
    yield engine
    engine.dispose()


@pytest.fixture
def pg_project(tmp_path: Path, pg_fresh_url: str) -> Iterator[ProjectOnDisk]:
    made = make_project(tmp_path / "etl-craft", pg_fresh_url)
    (made.root / "ingestion_scripts").mkdir()
    yield made
    made.engine.dispose()


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    started = Processes(tmp_path)
    try:
        yield started
    finally:
        started.stop_all()
