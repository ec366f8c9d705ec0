"""At scale (S6.C, W9): a catalog build issues the same Engine DB statements for 100 tasks as for
1,000, and reads only the runs it shows."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from sqlalchemy import event

from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.catalog.snapshot import read_catalog
from etl_craft.operations.context import OperationContext
from tests.conftest import DIALECTS
from tests.fixtures.databases import postgres_copy, sqlite_copy
from tests.fixtures.metadata import TESTER
from tests.fixtures.synthetic_catalog import seed_catalog

RUNS = 4
SHOWN = 2


Fresh = Callable[[], AbstractContextManager[str]]


@pytest.fixture(params=DIALECTS)
def fresh(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Fresh:
    """A maker of empty Engine DBs of one dialect."""
    if request.param == "sqlite":
        template = request.getfixturevalue("sqlite_template")
        return lambda: sqlite_copy(template, tmp_path_factory.mktemp("engine"))
    admin = request.getfixturevalue("pg_admin_url")
    name = request.getfixturevalue("pg_template")
    return lambda: postgres_copy(admin, name)


def _statements(url: str, pipelines: int) -> tuple[int, int, int]:
    """(statements, tasks shown, task runs shown) of a build of ``pipelines`` × 10 tasks."""
    engine = EngineDB(url)
    try:
        seed_catalog(engine, pipelines, 10, RUNS)
        sent: list[str] = []

        def count(*args: Any) -> None:
            sent.append(args[2])

        event.listen(engine.engine, "before_cursor_execute", count)
        catalog = read_catalog(
            OperationContext(None, None, engine, TESTER), runs_per_pipeline=SHOWN
        )
        event.remove(engine.engine, "before_cursor_execute", count)
        runs = sum(len(t.runs) for t in catalog.tasks)
        return len(sent), len(catalog.tasks), runs
    finally:
        engine.dispose()


def test_a_build_of_1000_tasks_issues_the_statements_of_a_build_of_100(fresh: Fresh) -> None:
    with fresh() as url:
        small = _statements(url, 10)
    with fresh() as url:
        large = _statements(url, 100)

    assert (small[1], large[1]) == (100, 1000)
    assert small[0] == large[0]
    assert (small[2], large[2]) == (100 * SHOWN, 1000 * SHOWN)
