"""The web UI on the demo as the README leaves it (SQLite Engine DB, DuckDB warehouse, no
`etl-craft server` running), in Debian's chromium at a laptop's 1,280 x 800: the largest
pipeline's graph is legible and moves, and a rerun asked for in the UI says plainly that
nothing will run it until a server leads. Screenshots go under
${ETL_CRAFT_TEST_ARTIFACTS:-<repo>/.artifacts}/browser/."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.demo.project import DemoRequest, run_demo
from tests.browser.test_catalog_browser import ARTIFACTS, CHROMIUM, _require_chromium
from tests.browser.test_ui_browser import (
    SMALLEST_TASK_NAME,
    WAIT_MS,
    console_error,
    failed_part,
    token_of,
)
from tests.chaos.harness import rows
from tests.fixtures.processes import Processes, free_port, wait_until_up
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
NO_SERVER = "No etl-craft server leads"
# The id of the first of the pipeline's own task nodes wholly inside the graph's box.
SHOWN_TASK = """prefix => {
    const box = document.querySelector('#dag-view').getBoundingClientRect();
    const inside = [...document.querySelectorAll('#dag-view g.node')].find(n => {
        const at = n.getBoundingClientRect();
        return n.dataset.id.startsWith(prefix) && at.left >= box.left && at.right <= box.right
            && at.top >= box.top && at.bottom <= box.bottom;
    });
    return inside ? inside.dataset.id : null;
}"""


@dataclass
class Demo:
    project: ProjectOnDisk
    processes: Processes
    url: str
    token: str
    shots: Path

    def shoot(self, page: Any, step: str) -> None:
        page.screenshot(path=self.shots / f"demo-{step}.png", full_page=True)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    _require_chromium()
    report = run_demo(DemoRequest(tmp_path_factory.mktemp("demo-ui")))
    assert report.succeeded, [run.status for run in report.runs]
    root = report.project_folder
    connector = load_connector(root / "craft-connector.yml", profile=None)
    project = ProjectOnDisk(root, connector, EngineDB(connector.engine_url))
    processes = Processes(tmp_path_factory.mktemp("demo-ui-processes"))
    try:
        port = free_port()
        ui = processes.start(project, "ui", "--port", str(port))
        made = processes.run(
            project, "token", "create", "--name", "demo_operator", "--role", "operator",
            "--format", "json",
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, ui)
        shots = ARTIFACTS / "browser"
        shots.mkdir(parents=True, exist_ok=True)
        yield Demo(project, processes, url, token_of(made), shots)
    finally:
        processes.stop_all()
        project.engine.dispose()


@pytest.fixture
def page(demo: Demo) -> Iterator[Any]:
    """A laptop-sized page signed in as an operator; no page may log a console error."""
    errors: list[str] = []
    with playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM))
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.set_default_timeout(WAIT_MS)
        opened = context.new_page()
        opened.on("console", lambda said: errors.extend(console_error(said)))
        opened.on("pageerror", lambda error: errors.append(str(error)))
        opened.on("response", lambda answer: errors.extend(failed_part(answer)))
        opened.goto(f"{demo.url}/")
        opened.fill("#token", demo.token)
        opened.click("main button[type=submit]")
        opened.wait_for_url(f"{demo.url}/")
        yield opened
        browser.close()
    assert errors == []


def largest_pipeline(demo: Demo) -> tuple[str, int]:
    [(code, tasks)] = rows(
        demo.project,
        "SELECT p.PIPELINE_CODE, COUNT(*) FROM CFG_TASKS k JOIN CFG_PIPELINES p "
        "ON p.PIPELINE_ID = k.PIPELINE_ID GROUP BY p.PIPELINE_CODE ORDER BY COUNT(*) DESC LIMIT 1",
    )
    return str(code), int(tasks)


def test_the_largest_demo_graph_is_legible_zooms_and_opens_a_log(demo: Demo, page: Any) -> None:
    code, tasks = largest_pipeline(demo)
    assert tasks >= 10, f"{code} has {tasks} tasks: not the demo's large pipeline"
    page.goto(f"{demo.url}/pipelines/{code}")
    view = page.locator("#dag-view")
    expect(view.locator("g.node")).not_to_have_count(0)
    assert page.evaluate(SMALLEST_TASK_NAME) >= 11
    demo.shoot(page, "01-largest-pipeline-graph")

    fitted = float(view.get_attribute("data-scale") or 0)
    page.get_by_role("button", name="Zoom in").click()
    assert float(view.get_attribute("data-scale") or 0) > fitted
    before = view.locator("svg").get_attribute("viewBox")
    view.focus()
    page.keyboard.press("ArrowDown")
    assert view.locator("svg").get_attribute("viewBox") != before
    demo.shoot(page, "02-largest-pipeline-zoomed")

    page.keyboard.press("0")
    shown = page.evaluate(SHOWN_TASK, f"{code}.")
    assert shown, f"no task of {code} is in view once the graph is fitted again"
    view.locator(f"g.node[data-id='{shown}'] rect.node-header").click(position={"x": 6, "y": 6})
    page.wait_for_url(re.compile(r"/attempts/\d+$"))
    expect(page.get_by_role("log")).to_contain_text("End of the log")


def attempts_of(demo: Demo, run_id: int, task: str) -> list[str]:
    return [
        str(status)
        for (status,) in rows(
            demo.project,
            "SELECT a.STATUS FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t "
            "ON t.TASK_RUN_ID = a.TASK_RUN_ID JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
            "WHERE t.PIPELINE_RUN_ID = :r AND k.TASK_CODE = :t ORDER BY a.ATTEMPT_ID",
            r=run_id,
            t=task,
        )
    ]


def test_a_ui_rerun_with_no_server_is_named_until_a_server_leads(demo: Demo, page: Any) -> None:
    [(run_id, task)] = rows(
        demo.project,
        "SELECT MAX(r.PIPELINE_RUN_ID), MIN(k.TASK_CODE) FROM AUD_PIPELINES_RUN_LOG r "
        "JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID "
        "JOIN CFG_TASKS k ON k.PIPELINE_ID = p.PIPELINE_ID WHERE p.PIPELINE_CODE = 'si_reference'",
    )
    assert attempts_of(demo, run_id, task) == ["SUCCESS"]
    page.goto(f"{demo.url}/runs/{run_id}")
    # Nothing waits yet: the banner says only that nothing would act on a request.
    expect(page.locator("#stalls .banner")).not_to_contain_text("queued")
    page.select_option("#rerun-task", task)
    page.fill("#rerun-reason", "the reference areas were corrected at the source")
    page.get_by_role("button", name="Rerun", exact=True).click()
    banner = page.locator("#stalls .banner")
    expect(banner).to_contain_text(NO_SERVER)
    expect(banner).to_contain_text("1 attempt is queued and waiting")
    expect(banner).to_contain_text("Start `etl-craft server`.")
    demo.shoot(page, "03-rerun-waits-for-a-server")

    demo.processes.start(demo.project, "server")
    # The banner is a live part of every page: it goes once the server leads, without a reload.
    expect(banner).to_have_count(0, timeout=2 * WAIT_MS)
    wait_for(
        lambda: attempts_of(demo, run_id, task) == ["SUCCESS", "SUCCESS"],
        f"the rerun of {task} to succeed",
        60,
    )
    page.goto(f"{demo.url}/runs/{run_id}")
    expect(page.locator("#run-tasks")).to_contain_text("Run status: SUCCESS")
    demo.shoot(page, "04-rerun-ran-once-a-server-leads")
