"""Projects for the backfill and force tests: an upstream pipeline and the pipelines that need it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.projects import ProjectOnDisk, make_project
from tests.integration.control.conftest import cli
from tests.integration.running.test_gates import FAILING
from tests.integration.running.test_ready_set import QUICK

__all__ = ["DATED", "cli", "cross_edge", "project"]

# Fails on the run dates listed in its input parameter fail_on, succeeds on every other date.
DATED = """
from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    if context.run_date.isoformat() in context.input_params.get("fail_on", []):
        raise RuntimeError(f"no source data for {context.run_date}")
    return ScriptResult(row_count=1)
"""


def cross_edge(downstream: str, upstream: str, kind: str) -> str:
    """A task dependency of ``downstream`` on ``upstream`` (a task of another pipeline)."""
    return (
        "INSERT INTO CFG_TASK_DEPENDENCY (TASK_ID, DEPENDS_ON_TASK_ID, DEPENDENCY_TYPE) "
        f"SELECT d.TASK_ID, u.TASK_ID, '{kind}' FROM CFG_TASKS d, CFG_TASKS u "
        f"WHERE d.TASK_CODE = '{downstream}' AND u.TASK_CODE = '{upstream}';\n"
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ProjectOnDisk]:
    url = None if request.param == "sqlite" else str(request.getfixturevalue("pg_fresh_url"))
    made = make_project(tmp_path / "etl-craft", url)
    with made.config.open("a") as config:
        # A gate that would wait gives up at once: a test never hangs on a missing feature.
        config.write("Orchestration:\n  gate_wait_minutes: 0\n")
    scripts = made.root / "ingestion_scripts"
    scripts.mkdir()
    (scripts / "quick.py").write_text(QUICK)
    (scripts / "failing.py").write_text(FAILING)
    (scripts / "dated.py").write_text(DATED)
    yield made
    made.engine.dispose()
