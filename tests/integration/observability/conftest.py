"""Observability fixtures: projects, and the real processes a test starts (stopped at its end)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chaos.harness import Processes
from tests.fixtures.projects import ProjectOnDisk, make_project


@pytest.fixture
def sqlite_project(tmp_path: Path) -> Iterator[ProjectOnDisk]:
    made = make_project(tmp_path / "etl-craft")
    (made.root / "ingestion_scripts").mkdir()
    yield made
    made.engine.dispose()


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
