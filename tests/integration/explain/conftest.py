"""The run-control projects and in-process CLI, and a failed run, shared by the explain tests."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import ExitCode
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import Cli, cli, project, task_runs
from tests.integration.control.test_rerun_and_skip import BREAK_LAND
from tests.integration.running.test_supervisor_sql import CHAIN

__all__ = ["cli", "failed_run", "project"]


@pytest.fixture
def failed_run(project: ProjectOnDisk, cli: Cli) -> int:
    """A supervised run of orders where land failed, summary was skipped and side succeeded."""
    project.migrate("0001_orders.sql", CHAIN)
    project.migrate("0002_break_land.sql", BREAK_LAND)
    done = cli.json("run", "--pipeline_code", "orders")
    assert done.code == ExitCode.FAILURE, done.err
    run_id = int(done.document()["run_id"])
    assert task_runs(project, run_id) == {
        "land": ("FAILED", 1),
        "summary": ("SKIPPED", 0),
        "side": ("SUCCESS", 1),
    }
    return run_id
