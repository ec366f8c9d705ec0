"""The run-control projects and in-process CLI, and a failed run, shared by the explain tests."""

from __future__ import annotations

import pytest

from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import Cli, cli, failed_orders_run, project, task_runs

__all__ = ["cli", "failed_run", "project"]


@pytest.fixture
def failed_run(project: ProjectOnDisk, cli: Cli) -> int:
    """A supervised run of orders where land failed, summary was skipped and side succeeded."""
    run_id = failed_orders_run(project, cli)
    assert task_runs(project, run_id) == {
        "land": ("FAILED", 1),
        "summary": ("SKIPPED", 0),
        "side": ("SUCCESS", 1),
    }
    return run_id
