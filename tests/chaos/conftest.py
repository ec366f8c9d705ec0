"""Chaos fixtures: a project per Engine DB dialect, and the processes a test starts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chaos.harness import Processes
from tests.fixtures.projects import ProjectOnDisk, make_project


@pytest.fixture(params=["sqlite", "postgresql"])
def chaos_project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
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
