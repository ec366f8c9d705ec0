"""doctor's connection budget counts the overseer, the live workers and the running tasks."""

from __future__ import annotations

from pathlib import Path

from etl_craft.operations.context import ContextRequest
from etl_craft.operations.doctor import doctor
from tests.fixtures.projects import make_project
from tests.integration.worker.test_queue_claim import claim, queue
from tests.integration.worker.test_worker_rows import register, worker


def test_the_budget_names_each_kind_of_process_and_what_it_needs(
    tmp_path: Path, pg_fresh_url: str
) -> None:
    project = make_project(tmp_path / "etl-craft", pg_fresh_url)
    first, second, third = worker("a"), worker("b"), worker("c")
    register(project.engine, first, second, third)
    queue(project.engine, 2)
    claim(project.engine, first.worker_id)
    claim(project.engine, second.worker_id)

    report = doctor(ContextRequest(config=project.config, cwd=project.root))
    project.engine.dispose()

    [check] = [check for check in report.checks if check.name == "connections"]
    assert check.detail.startswith(
        "budget 12 = 1 overseer x 4 + 3 worker(s) x 2 + 2 running task(s) x 1, of max_connections="
    )
