"""The web UI's operator flows in Debian's chromium, against real processes on a PostgreSQL
Engine DB: `etl-craft server --pool-provider queue`, one `etl-craft worker` and `etl-craft ui`,
started once for the module. The tokens come from `etl-craft token create`; the scripted tasks
wait until the test releases them. Each step leaves a screenshot under
${ETL_CRAFT_TEST_ARTIFACTS:-<repo>/.artifacts}/browser/ for a person to look at."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen
from typing import Any

import pytest

from tests.browser.test_catalog_browser import ARTIFACTS, CHROMIUM, _require_chromium
from tests.chaos.harness import rows
from tests.contract.test_pools import chain
from tests.fixtures.processes import Done, Processes, free_port, scripted_project, wait_until_up
from tests.fixtures.projects import ProjectOnDisk
from tests.fixtures.waiting import wait_for
from tests.integration.worker.queueing import python_pipeline, release, start_worker, starts

pytestmark = pytest.mark.postgres
playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
ROLES = ("viewer", "operator", "admin")
# Refreshes the run's task table as a pushed change does, and resolves once htmx swapped it in.
TASKS_REFRESHED = (
    "() => new Promise(done => { document.body.addEventListener('htmx:afterSettle', done, "
    "{once: true}); htmx.trigger('#run-tasks', 'etl-craft:changed'); })"
)
# Well under the 30 s the live parts wait between polls while changes are pushed to them.
PUSHED_MS = 10_000
WAIT_MS = 30_000  # a condition the processes reach in a second or two, with room on a busy host

# Prints a line when it starts and, until released as WAIT is, each line the test writes to
# say-<name>.
CHATTY = """
import time
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    folder = Path(context.input_params["folder"])
    name = context.input_params["name"]
    print(f"{name} is up", flush=True)
    said = 0
    while not any((folder / f"release-{end}").exists() for end in (name, "all")):
        say = folder / f"say-{name}"
        lines = say.read_text().splitlines() if say.exists() else []
        for line in lines[said:]:
            print(line, flush=True)
        said = len(lines)
        time.sleep(0.05)
    return ScriptResult(row_count=1)
"""
# Fails until the test writes fixed-<name>, as a source that comes back would.
FLAKY = """
from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    folder = Path(context.input_params["folder"])
    name = context.input_params["name"]
    if not (folder / f"fixed-{name}").exists():
        raise RuntimeError(f"the source of {name} answered 503 Service Unavailable")
    return ScriptResult(row_count=2)
"""


@dataclass
class Site:
    """The live processes' project, the UI's address and a token per role."""

    project: ProjectOnDisk
    url: str
    tokens: dict[str, str]
    shots: Path
    said: Path  # what `etl-craft ui` prints
    runs: int = 0
    started: int = 0

    def queue(self, pipeline: str) -> int:
        """A new MANUAL run of ``pipeline``, left QUEUED for the server to admit."""
        self.runs += 1
        return self.project.queued_run(pipeline, run_key=f"manual:{pipeline}:{self.runs}")

    def run_status(self, run_id: int) -> str:
        [(status,)] = rows(
            self.project,
            "SELECT STATUS FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r",
            r=run_id,
        )
        return str(status)

    def wait_started(self, task: str) -> None:
        """Until one more waiting script has started: ``task``'s, as tests run one at a time."""
        self.started += 1
        wait_for(lambda: len(starts(self.project)) >= self.started, f"{task} to start", 60)

    def migrations(self) -> list[str]:
        return sorted(path.name for path in (self.project.root / "migrations").glob("*.sql"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, pg_engine_url: str) -> Iterator[Site]:
    _require_chromium()
    project = scripted_project(tmp_path_factory.mktemp("ui-browser") / "etl-craft", pg_engine_url)
    processes = Processes(tmp_path_factory.mktemp("ui-browser-processes"))
    try:
        pipelines(project)
        # Each start costs seconds of imports: every process starts at once.
        port = free_port()
        ui = processes.start(project, "ui", "--port", str(port))
        processes.start(project, "server", "--pool-provider", "queue", "--metrics-port", "0")
        makers = {role: start_token(processes, project, role) for role in ROLES}
        start_worker(processes, project, "--ingestion-slots", "6")
        tokens = {role: token_of(processes.finish(maker)) for role, maker in makers.items()}
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, ui)
        shots = ARTIFACTS / "browser"
        shots.mkdir(parents=True, exist_ok=True)
        said = processes.folder / f"etl-craft-{processes.started.index(ui)}.out"
        yield Site(project, url, tokens, shots, said)
    finally:
        release(project)  # whatever still waits ends, so no task outlives the module
        processes.stop_all()
        project.engine.dispose()


def pipelines(project: ProjectOnDisk) -> None:
    scripts = project.root / "ingestion_scripts"
    (scripts / "chatty.py").write_text(CHATTY)
    (scripts / "flaky.py").write_text(FLAKY)
    python_pipeline(project, "grid", ["hold"])
    python_pipeline(project, "failing", ["fetch"], script_of={"fetch": "flaky.py"})
    python_pipeline(project, "talk", ["chatter"], script_of={"chatter": "chatty.py"})
    python_pipeline(project, "doomed", ["stuck"])
    python_pipeline(project, "pushed", ["await"])
    python_pipeline(project, "shape", ["quick_first", "quick_second"])
    chain(project, "shape", "quick_first", "quick_second")


def start_token(processes: Processes, project: ProjectOnDisk, role: str) -> Popen[bytes]:
    """Make a token as a person does, with `etl-craft token create`."""
    name = f"{role}_in_browser"
    return processes.start(
        project, "token", "create", "--name", name, "--role", role, "--format", "json"
    )


def token_of(made: Done) -> str:
    assert made.code == 0, made.output
    document = json.loads(made.output[made.output.index("{") :])
    assert document["schema"] == "etl-craft/token/1"
    return str(document["token"])


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM))
        yield browser
        browser.close()


@pytest.fixture
def browse(site: Site, chromium: Any) -> Iterator[Any]:
    """``browse(role)``: a page of a browser of its own, signed in with ``role``'s token (the
    filled form shot as ``form_shot`` when given). No page
    may log a console error (a script or style the content security policy refused, say) nor
    fail to load a static file or a live fragment."""
    contexts: list[Any] = []
    errors: list[str] = []

    def signed_in(role: str, form_shot: str | None = None) -> Any:
        context = chromium.new_context(viewport={"width": 1300, "height": 900})
        context.set_default_timeout(WAIT_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("console", lambda said: errors.extend(console_error(said)))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("response", lambda answer: errors.extend(failed_part(answer)))
        page.goto(f"{site.url}/")
        page.wait_for_url(re.compile(r"/sign-in"))
        page.fill("#token", site.tokens[role])
        if form_shot:
            shoot(site, page, form_shot)
        page.click("main button[type=submit]")
        page.wait_for_url(f"{site.url}/")
        expect(page.locator("header .who")).to_contain_text(f"{role}_in_browser")
        return page

    yield signed_in
    for context in contexts:
        context.close()
    assert errors == []


def console_error(said: Any) -> list[str]:
    # A refused POST is logged as a failed load: the tests make some on purpose.
    failed_load = said.text.startswith("Failed to load resource")
    return [said.text] if said.type == "error" and not failed_load else []


def failed_part(answer: Any) -> list[str]:
    """A static file or live fragment the page could not load."""
    part = re.search(r"//[^/]+/(static|partials)/", answer.url)
    return [f"{answer.status} {answer.url}"] if part and answer.status >= 400 else []


def shoot(site: Site, page: Any, step: str) -> None:
    page.screenshot(path=site.shots / f"ui-flows-{step}.png", full_page=True)


def forge(page: Any, path: str, fields: dict[str, str]) -> tuple[int, str]:
    """POST ``fields`` from the page's own origin with its cookie, as a script on it could:
    the answer's status and text."""
    answer: dict[str, Any] = page.evaluate(
        """async ([path, fields]) => {
            const answer = await fetch(path, {method: "POST", body: new URLSearchParams(fields),
                                               redirect: "manual", credentials: "same-origin"});
            return {status: answer.status, text: await answer.text()};
        }""",
        [path, fields],
    )
    return int(answer["status"]), str(answer["text"])


def test_the_ui_says_where_it_serves_and_how_to_sign_in(site: Site) -> None:
    said = site.said.read_text()
    assert f"etl-craft ui: project default at {site.url}/ ; sign in with an API token" in said
    assert "etl-craft token create --name <you> --role operator" in said


def test_an_operator_signs_in_with_a_token(site: Site, browse: Any) -> None:
    page = browse("operator", form_shot="00-sign-in")
    expect(page.locator("header .who")).to_contain_text("(operator)")
    expect(page.locator("nav[aria-label=Main]")).to_contain_text("Runs")
    shoot(site, page, "01-signed-in")


def test_the_grid_turns_a_running_task_to_success_without_a_reload(site: Site, browse: Any) -> None:
    run_id = site.queue("grid")
    site.wait_started("hold")
    page = browse("operator")
    page.goto(f"{site.url}/runs?pipeline=grid")
    page.evaluate("window.loadedOnce = 'the grid page'")  # any navigation would drop it
    cell = page.locator(f"tr[data-run='{run_id}'] td[data-task='hold']")
    expect(cell.locator(".word")).to_have_text("IN-PROGRESS")
    shoot(site, page, "02-grid-running")

    release(site.project, "hold")

    expect(cell.locator(".word")).to_have_text("SUCCESS")
    expect(cell.locator(".took")).to_have_text(re.compile(r"^\d+ s$"))  # its attempt's run time
    expect(page.locator(f"tr[data-run='{run_id}'] td").first).to_have_text("SUCCESS")
    assert page.evaluate("window.loadedOnce") == "the grid page"
    shoot(site, page, "03-grid-success")


def test_a_run_page_follows_its_run_to_success_by_push(site: Site, browse: Any) -> None:
    run_id = site.queue("pushed")
    site.wait_started("await")
    page = browse("viewer")
    page.goto(f"{site.url}/runs/{run_id}")
    page.evaluate("window.loadedOnce = 'the run page'")  # any navigation would drop it
    expect(page.locator("body")).to_have_attribute("data-pushed", "true")  # its stream is open
    tasks = page.locator("#run-tasks")
    expect(tasks).to_contain_text("Run status: IN-PROGRESS")
    expect(tasks.locator("tr[data-task='await']")).to_contain_text("RUNNING")
    expect(page.locator("h1 #run-status")).to_have_text("IN-PROGRESS")
    shoot(site, page, "07-run-pushed-running")

    release(site.project, "await")

    expect(tasks).to_contain_text("Run status: SUCCESS", timeout=PUSHED_MS)
    expect(tasks.locator("tr[data-task='await']")).to_contain_text("SUCCESS")
    expect(page.locator("h1 #run-status")).to_have_text("SUCCESS")  # the heading follows
    expect(page.locator("#run-ended time")).to_be_visible()
    assert page.evaluate("window.loadedOnce") == "the run page"
    shoot(site, page, "08-run-pushed-success")


def test_a_failed_task_is_explained_then_rerun_with_a_reason(site: Site, browse: Any) -> None:
    run_id = site.queue("failing")
    page = browse("operator")
    page.goto(f"{site.url}/runs/{run_id}")
    expect(page.locator("#run-tasks")).to_contain_text("Run status: FAILED")
    page.get_by_role("button", name="Explain fetch").click()
    # In place: the row right under the task's own.
    panel = page.locator("#run-tasks tr[data-task='fetch'] + tr.explain-row")
    expect(panel.locator("h2")).to_have_text("Why fetch FAILED")
    expect(panel).to_contain_text("the source of fetch answered 503 Service Unavailable")
    page.evaluate(TASKS_REFRESHED)  # a refresh of the task table keeps the panel open
    expect(panel.locator("h2")).to_have_text("Why fetch FAILED")
    shoot(site, page, "04-explain-failed")

    (site.project.root / "fixed-fetch").write_text("the source is back")
    panel.get_by_label("Rerun fetch because").fill("the source is back after its outage")
    panel.get_by_role("button", name="Rerun fetch").click()
    expect(page.locator("main .message")).to_be_visible()
    expect(page.locator("#run-tasks tr[data-task='fetch']")).to_contain_text("SUCCESS")
    shoot(site, page, "05-rerun-succeeded")

    page.get_by_role("link", name="Interventions", exact=True).click()
    listed = page.locator("main table tr", has_text="the source is back after its outage")
    expect(listed).to_have_count(2)  # the rerun of the task, and the run it reopened
    rerun = listed.filter(has_text="RERUN")
    expect(rerun).to_contain_text("task fetch")
    expect(rerun).to_contain_text("operator_in_browser")
    shoot(site, page, "06-intervention-listed")


def test_a_running_attempt_s_log_grows_without_a_reload(site: Site, browse: Any) -> None:
    run_id = site.queue("talk")
    page = browse("operator")
    page.goto(f"{site.url}/runs/{run_id}")
    page.locator("#run-tasks tr[data-task='chatter'] ol.attempts a").first.click()
    page.wait_for_url(re.compile(r"/attempts/\d+$"))
    expect(page.locator("nav a[aria-current=page]")).to_have_text("Runs")
    log = page.get_by_role("log")
    expect(log).to_contain_text("chatter is up")
    page.evaluate("window.loadedOnce = 'the attempt page'")

    line = f"row batch {run_id} landed"
    (site.project.root / "say-chatter").write_text(f"{line}\n")

    expect(log).to_contain_text(line)
    assert page.evaluate("window.loadedOnce") == "the attempt page"
    shoot(site, page, "07-log-tail")
    release(site.project, "chatter")
    expect(log).to_contain_text("End of the log: the attempt ended SUCCESS")


def test_an_operator_cancels_a_run_with_a_reason(site: Site, browse: Any) -> None:
    run_id = site.queue("doomed")
    site.wait_started("stuck")
    page = browse("operator")
    page.goto(f"{site.url}/runs/{run_id}")
    page.fill("#cancel-reason", "the upstream file is corrupt")
    page.get_by_role("button", name="Cancel run").click()
    # Not sent until confirmed: the browser holds the form back.
    assert page.evaluate("document.querySelector('#cancel-confirm').validity.valueMissing")
    page.check("#cancel-confirm")
    page.get_by_role("button", name="Cancel run").click()

    expect(page.locator("#run-tasks")).to_contain_text("Run status: CANCELLED")
    shoot(site, page, "08-cancelled")
    assert site.run_status(run_id) == "CANCELLED"
    [(by, reason)] = rows(
        site.project,
        "SELECT REQUESTED_BY, REASON FROM AUD_RUN_INTERVENTIONS "
        "WHERE PIPELINE_RUN_ID = :r AND KIND = 'CANCEL'",
        r=run_id,
    )
    assert (by, reason) == ("operator_in_browser", "the upstream file is corrupt")


def test_a_viewer_sees_no_action_and_a_forged_post_is_refused(site: Site, browse: Any) -> None:
    run_id = site.queue("doomed")
    site.wait_started("stuck")
    page = browse("viewer")
    page.goto(f"{site.url}/runs/{run_id}")
    expect(page.locator("#run-tasks")).to_contain_text("Run status: IN-PROGRESS")
    expect(page.locator("main form[method=post]")).to_have_count(0)
    expect(page.get_by_role("button", name=re.compile("Cancel|Rerun|Mark"))).to_have_count(0)
    shoot(site, page, "09-viewer")
    csrf = page.locator("header input[name=csrf_token]").input_value()
    cancel = f"/runs/{run_id}/cancel"

    # Each a 403, not the 401 of no session: the cookie went with each.
    for fields in ({}, {"csrf_token": csrf[::-1]}):
        status, text = forge(page, cancel, {"reason": "forged", **fields})
        assert (status, "CSRF token" in text) == (403, True)
    status, text = forge(page, cancel, {"reason": "forged", "csrf_token": csrf})
    assert (status, "CSRF token" in text, "operator" in text) == (403, False, True)

    assert site.run_status(run_id) == "IN-PROGRESS"
    page.goto(f"{site.url}/pipelines/doomed")
    expect(page.locator("svg.etl-drawing")).to_be_visible()
    # Zooming the DAG is the only button a viewer has.
    expect(page.locator("main form[method=post], main button:not([data-zoom])")).to_have_count(0)
    release(site.project, "stuck")
    page.goto(f"{site.url}/runs/{run_id}")
    expect(page.locator("#run-tasks")).to_contain_text("Run status: SUCCESS")


def test_a_cycle_is_refused_and_a_new_task_lands_as_the_next_migration(
    site: Site, browse: Any
) -> None:
    page = browse("admin")
    before = site.migrations()
    page.goto(f"{site.url}/metadata/pipelines/shape")
    page.get_by_role("link", name="Add a task dependency", exact=True).click()
    page.fill("#key_task", "quick_first")
    page.fill("#key_upstream_pipeline", "shape")
    page.fill("#key_upstream_task", "quick_second")
    page.click("main button[type=submit]")
    refusal = page.locator(".refusal")
    expect(refusal).to_contain_text("validate finds 1 failure")
    expect(page.locator("main table").first).to_contain_text("the task dependencies form a cycle")
    expect(page.locator("form[action='/metadata/apply']")).to_have_count(0)
    shoot(site, page, "10-cycle-refused")
    assert site.migrations() == before

    page.goto(f"{site.url}/metadata/pipelines/shape")
    page.get_by_role("link", name="Add a task", exact=True).click()
    page.fill("#key_task", "quick_third")
    page.select_option("#field_HANDLER", "PYTHON")
    page.fill("#parameters", "SCRIPT=quick.py")
    page.fill("#upstream", "quick_second")
    page.click("main button[type=submit]")
    name = f"{len(before) + 1:04d}_add_task_quick_third.sql"
    expect(page.locator("h1")).to_contain_text(name)
    shoot(site, page, "11-new-task-preview")
    page.click("form[action='/metadata/apply'] button")
    expect(page.locator("h1")).to_contain_text(f"Applied migration {name}")
    shoot(site, page, "12-new-task-applied")

    assert site.migrations() == [*before, name]
    written = (site.project.root / "migrations" / name).read_text()
    assert "quick_third" in written
    page.get_by_role("link", name="Pipeline page", exact=True).click()
    expect(page.locator("svg.etl-drawing")).to_contain_text("quick_third")
    shoot(site, page, "13-pipeline-with-new-task")


# The smallest size at which a task name is drawn in the DAG's box, in CSS pixels.
SMALLEST_TASK_NAME = """() => Math.min(...[...document.querySelectorAll('#dag-view text.node-label')]
    .map(t => t.getScreenCTM().a * parseFloat(getComputedStyle(t).fontSize)))"""
# Whether any cell of the grid is wider than its box shows, or the grid wider than its page.
GRID_CUT = """() => {
    const wrap = document.querySelector('#runs-grid .grid-wrap');
    const cut = [...wrap.querySelectorAll('th, td')].filter(c => c.scrollWidth > c.clientWidth);
    return cut.length + (wrap.scrollWidth > wrap.clientWidth ? 1 : 0);
}"""


def test_run_now_then_the_grid_timeline_and_dag_of_the_run(site: Site, browse: Any) -> None:
    page = browse("operator")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{site.url}/pipelines/shape")
    page.fill("#run-now-reason", "checking the timeline after a fix")
    page.get_by_role("button", name="Run now").click()
    page.wait_for_url(re.compile(r"/runs/\d+$"))
    run_id = int(page.url.rsplit("/", 1)[1])
    expect(page.locator("#run-tasks")).to_contain_text("Run status: SUCCESS")

    page.goto(f"{site.url}/pipelines/shape?run={run_id}")
    # Each task ran once (an earlier test may have added one to the pipeline).
    tasks = page.locator(f"#runs-grid tr[data-run='{run_id}'] td.cell").count()
    assert tasks >= 2
    took = page.locator(f"#runs-grid tr[data-run='{run_id}'] td.cell .took")
    expect(took).to_have_count(tasks)
    expect(took.first).to_have_text(re.compile(r"^\d+ s$"))
    assert page.evaluate(GRID_CUT) == 0
    expect(page.locator("figure.gantt g.lane")).to_have_count(tasks)
    expect(page.locator("figure.gantt rect.bar-success")).to_have_count(tasks)
    assert page.evaluate(SMALLEST_TASK_NAME) >= 11
    shoot(site, page, "09-pipeline-grid-timeline-dag")

    view = page.locator("#dag-view")
    fitted = float(view.get_attribute("data-scale") or 0)
    page.get_by_role("button", name="Zoom in").click()
    assert float(view.get_attribute("data-scale") or 0) > fitted
    view.focus()
    page.keyboard.press("0")
    assert float(view.get_attribute("data-scale") or 0) == fitted
    before = view.locator("svg").get_attribute("viewBox")
    page.keyboard.press("ArrowRight")
    assert view.locator("svg").get_attribute("viewBox") != before

    node = view.locator("g.node[data-id='shape.quick_second'] rect.node-header")
    node.click(position={"x": 6, "y": 6})  # the box, beside its name's link
    page.wait_for_url(re.compile(r"/attempts/\d+$"))
    expect(page.get_by_role("log")).to_be_visible()
