"""The pages render the project's real state, read through the same operations as the API."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import re

import pytest

from etl_craft.core.enums import SlotKind
from etl_craft.enginedb.leadership import Leadership
from etl_craft.enginedb.overseers import register_overseer, stop_overseer
from etl_craft.enginedb.transitions import (
    claim_attempt,
    create_task_run,
    queue_attempt,
    register_worker,
)
from etl_craft.enginedb.workers import WorkerRegistration
from etl_craft.operations.health.project import project_health
from etl_craft.operations.interventions.actions import MarkRequest, mark
from etl_craft_ui.app import create_app
from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.served import SECRET_PIPELINE_PASSWORD, SECRETS
from tests.integration.ui.conftest import Ui, settings_of, sign_in
from tests.integration.worker.queueing import queue_run


def figure(page: str, label: str) -> int:
    found = re.search(rf'<div class="muted">{label}</div><div class="figure">(\d+)</div>', page)
    assert found is not None, f"no {label} figure in {page[:2000]}"
    return int(found[1])


def backdate(ui: Ui, run_id: int, seconds: int) -> None:
    """As if the run had started ``seconds`` earlier than it did."""
    with ui.project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            "UPDATE AUD_PIPELINES_RUN_LOG SET START_DATE = etl_craft_add_seconds(START_DATE, :s) "
            "WHERE PIPELINE_RUN_ID = :r",
            s=-seconds,
            r=run_id,
        )


def test_the_projects_page_counts_running_failed_late_and_queued_work(ui: Ui) -> None:
    ui.end_live_runs()
    before = project_health(ui.tester)
    ui.project.migrate("0003_sla.sql", "UPDATE CFG_PIPELINES SET SLA_MINUTES = 60;")
    failed = ui.project.new_run("orders", "manual:health-failed")
    mark(ui.tester, MarkRequest("orders", "FAILED", "failed for the health test", failed))
    late = ui.project.new_run("vault", "manual:health-late")
    backdate(ui, late, 2 * 3600)
    ui.project.queued_run("orders", "manual:health-queued")
    page = ui.get("viewer", "/").text
    assert figure(page, "Running") == before.executing  # nothing of the new runs executes
    assert figure(page, "Waiting") == before.running - before.executing + 1
    assert 'href="/runs?status=FAILED"' in page
    assert figure(page, "Failed today") == before.failed_today + 1
    assert figure(page, "SLA misses") == before.sla_missed_today + before.over_sla_now + 1
    assert figure(page, "Queued work") == before.queued_runs + before.queued_attempts + 1
    fragment = ui.get("viewer", "/partials/project-health")
    assert fragment.status_code == 200
    assert "<html" not in fragment.text
    assert 'hx-get="/partials/project-health"' in fragment.text
    ui.end_live_runs()


def test_the_pipelines_page_lists_schedule_state_and_last_run(ui: Ui) -> None:
    page = ui.get("viewer", "/pipelines")
    assert page.status_code == 200
    assert 'href="/pipelines/orders"' in page.text
    assert 'href="/pipelines/vault"' in page.text
    newest = ui.rows(
        "SELECT max(r.PIPELINE_RUN_ID) AS id FROM AUD_PIPELINES_RUN_LOG r JOIN CFG_PIPELINES p "
        "ON p.PIPELINE_ID = r.PIPELINE_ID WHERE p.PIPELINE_CODE = 'orders'"
    )[0]["id"]
    assert f'href="/pipelines/orders?run={newest}"' in page.text
    strip = re.search(
        r'<ol class="strip" aria-label="recent runs of orders">(.*?)</ol>', page.text, re.S
    )
    assert strip is not None
    assert f'href="/pipelines/orders?run={newest}" title="run {newest} ' in strip[1]
    assert "manual only" in page.text


def test_the_pipeline_page_draws_the_dag_with_the_selected_runs_statuses(ui: Ui) -> None:
    run_id = int(ui.rows("SELECT min(PIPELINE_RUN_ID) AS id FROM AUD_PIPELINES_RUN_LOG")[0]["id"])
    page = ui.get("viewer", "/pipelines/orders", run=str(run_id)).text
    svg = page[page.index("<svg") : page.index("</svg>")]
    for task in ("land", "summary", "side"):
        node = re.search(rf'<g class="([^"]+)" id="n-orders\.{task}"', svg)
        assert node is not None, task
        assert "state-success" in node[1]
    assert svg.count(">SUCCESS</text>") == 3  # the status in words, not by colour alone
    assert f"Task statuses of run {run_id} (SUCCESS)" in page


def test_a_live_runs_dag_refreshes_itself_and_names_tasks_not_run(ui: Ui) -> None:
    ui.end_live_runs()
    run_id = ui.project.new_run("orders", "manual:dag-live")
    mark(ui.tester, MarkRequest("orders", "SUCCESS", "settled for the test", run_id, "side"))
    page = ui.get("viewer", "/pipelines/orders", run=str(run_id)).text
    assert f'hx-get="/partials/pipelines/orders/dag?run={run_id}"' in page
    fragment = ui.get("viewer", "/partials/pipelines/orders/dag", run=str(run_id)).text
    side = re.search(r'<g class="([^"]+)" id="n-orders\.side"', fragment)
    land = re.search(r'<g class="([^"]+)" id="n-orders\.land"', fragment)
    assert side is not None
    assert land is not None
    assert "state-success" in side[1]
    assert "state-not-run" in land[1]
    assert ">NOT RUN</text>" in fragment
    ui.end_live_runs()


def test_a_run_of_another_pipeline_is_not_found_on_a_pipeline_page(ui: Ui) -> None:
    vault_run = ui.project.queued_run("vault", "manual:other-pipeline")
    answer = ui.get("viewer", "/pipelines/orders", run=str(vault_run))
    assert answer.status_code == 404
    assert f"run {vault_run} is a run of pipeline vault" in answer.text
    assert "Traceback" not in answer.text
    assert ui.get("viewer", "/pipelines/nosuch").status_code == 404
    ui.end_live_runs()


def test_tasks_and_tables_link_to_the_published_catalog(ui: Ui) -> None:
    assert ui.ctx.connector is not None
    docs = dataclasses.replace(ui.ctx.connector.docs_site, base_url="https://catalog.example/")
    connector = dataclasses.replace(ui.ctx.connector, docs_site=docs)
    app = create_app(dataclasses.replace(ui.ctx, connector=connector), settings_of())
    browser = ui.browser(app=app)
    sign_in(browser, ui.tokens["viewer"])
    page = browser.get("/pipelines/orders").text
    assert 'href="https://catalog.example/tasks/orders/land.html"' in page
    assert 'href="https://catalog.example/tables/lnd.orders.html"' in page
    plain = ui.get("viewer", "/pipelines/orders").text
    assert "catalog.example" not in plain
    assert 'href="tasks/' not in plain  # no link into a catalog the UI does not know


def pool_row(page: str, pool: str, kind: str) -> tuple[int, int, int]:
    """Capacity, slots in use and due queue of one pool's slot kind, as the page shows them."""
    row = re.search(
        rf"<tr><th scope=\"row\">{pool}</th><td>{kind}</td>"
        r"<td class=\"num\">(\d+)</td>\s*<td class=\"num\">(\d+)</td><td class=\"num\">(\d+)</td>",
        page,
    )
    assert row is not None, page
    return int(row[1]), int(row[2]), int(row[3])


def test_the_workers_page_shows_pools_queue_and_heartbeats(ui: Ui) -> None:
    ui.end_live_runs()
    postgres = ui.project.engine.dialect == "postgresql"
    if postgres:
        with ui.project.engine.transaction(TESTER) as conn:
            register_worker(
                conn,
                WorkerRegistration("w-ui-test-1", "etl_pool", "host-a", 4242, "0.1", 1, 3, 2),
            )
    queue_run(ui.project, "vault", ["fetch"], pool="etl_pool")
    queued = queue_run(ui.project, "orders", ["land", "side"], pool="etl_pool")
    with ui.project.engine.transaction(TESTER) as conn:
        claim_attempt(conn, queued["land"], TESTER, owner_id="w-ui-test-1", lease_seconds=60)
    page = ui.get("viewer", "/workers").text
    assert pool_row(page, "etl_pool", "ingestion") == (3 if postgres else 0, 0, 1)
    assert pool_row(page, "etl_pool", "warehouse") == (2 if postgres else 0, 1, 1)
    if postgres:
        worker = page[page.index("<code>w-ui-test-1</code>") :]
        assert "host-a" in worker
        assert re.search(
            r'<td class="num">3</td>\s*<td class="num">2</td><td class="num">1</td>', worker
        )
    fragment = ui.get("viewer", "/partials/workers").text
    assert 'hx-get="/partials/workers"' in fragment


def queue_attempt_in(ui: Ui, pool: str, run_key: str) -> int:
    """A new run of ``orders`` whose task ``land`` has one attempt QUEUED in ``pool``."""
    run_id = ui.project.new_run("orders", run_key)
    task_id = int(
        ui.rows(
            "SELECT k.TASK_ID AS id FROM CFG_TASKS k JOIN CFG_PIPELINES p "
            "ON p.PIPELINE_ID = k.PIPELINE_ID WHERE p.PIPELINE_CODE = 'orders' "
            "AND k.TASK_CODE = 'land'"
        )[0]["id"]
    )
    with ui.project.engine.transaction(TESTER) as conn:
        task_run_id = create_task_run(conn, run_id, task_id, TESTER)
        queue_attempt(conn, task_run_id, TESTER, slot_kind=SlotKind.WAREHOUSE, pool=pool)
    return run_id


def banner(page: str) -> str:
    found = re.search(r'<div class="banner" role="alert">(.*?)</div>', page, re.S)
    return "" if found is None else found[1]


def test_every_page_says_no_server_leads_until_one_does(ui: Ui) -> None:
    ui.end_live_runs()
    ui.project.queued_run("orders", "manual:stalled")
    said = banner(ui.get("viewer", "/pipelines").text)
    assert (
        "No etl-craft server leads (no server has ever run): 1 run is queued and waiting;" in said
    )
    assert "Start `etl-craft server`." in said
    assert "No etl-craft server leads" in banner(ui.get("viewer", "/partials/stalls").text)
    leadership = Leadership(ui.project.engine, "overseer-of-the-ui-test")
    with ui.project.engine.transaction(TESTER) as conn:
        register_overseer(conn, "overseer-of-the-ui-test", "test")
    assert leadership.acquire(TESTER)
    try:
        assert "No etl-craft server leads" not in banner(ui.get("viewer", "/runs").text)
    finally:
        leadership.release()
        stop_overseer(ui.project.engine, TESTER, "overseer-of-the-ui-test")
    assert "No etl-craft server leads (last heartbeat at" in banner(ui.get("viewer", "/").text)
    ui.end_live_runs()


def test_a_pool_whose_workers_are_gone_is_named_with_its_queued_attempts(ui: Ui) -> None:
    if ui.project.engine.dialect != "postgresql":
        pytest.skip("worker agents register on a PostgreSQL Engine DB only")
    ui.end_live_runs()
    with ui.project.engine.transaction(TESTER) as conn:
        register_worker(
            conn, WorkerRegistration("w-stalled", "stalled_pool", "host-b", 4343, "0.1", 1, 1, 1)
        )
    queue_attempt_in(ui, "stalled_pool", "manual:stalled-pool")
    assert "queued for pool stalled_pool" not in banner(ui.get("viewer", "/").text)
    with ui.project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            "UPDATE AUD_WORKERS SET HEARTBEAT_AT = etl_craft_add_seconds(HEARTBEAT_AT, -3600) "
            "WHERE WORKER_ID = 'w-stalled'",
        )
    said = banner(ui.get("viewer", "/").text)
    assert re.search(
        r"1 attempt is queued for pool stalled_pool and no worker has a heartbeat "
        r"\(last heartbeat at \d{4}-\d\d-\d\d \d\d:\d\d\): "
        r"start `etl-craft worker --pool stalled_pool`\.",
        said,
    ), said
    ui.end_live_runs()


def test_the_interventions_page_lists_who_when_why_and_what(ui: Ui) -> None:
    ui.end_live_runs()
    run_id = ui.project.new_run("orders", "manual:intervened")
    mark(ui.tester, MarkRequest("orders", "SKIPPED", "not needed this day", run_id, "side"))
    page = ui.get("viewer", "/interventions").text
    assert "not needed this day" in page
    assert TESTER.name in page
    assert f"run {run_id}, task side" in page
    filtered = ui.get("viewer", "/interventions", pipeline="vault").text
    assert "not needed this day" not in filtered
    ui.end_live_runs()


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/pipelines",
        "/pipelines/vault",
        "/interventions",
        "/workers",
        "/partials/project-health",
        "/partials/pipelines/vault/dag",
        "/partials/workers",
    ],
)
def test_no_page_shows_a_secret(ui: Ui, path: str) -> None:
    answer = ui.get("admin", path)
    assert answer.status_code == 200, answer.text
    for secret in SECRETS:
        assert secret not in answer.text
    if path == "/pipelines/vault":
        assert "DB_PASSWORD" in answer.text
        assert "***" in answer.text
        assert SECRET_PIPELINE_PASSWORD not in answer.text


def test_a_secret_typed_into_a_reason_is_masked_on_every_page(ui: Ui) -> None:
    ui.end_live_runs()
    run_id = ui.project.new_run("orders", "manual:leaky-reason")
    reason = f"retry with password {SECRET_PIPELINE_PASSWORD} & <again>"
    mark(ui.tester, MarkRequest("orders", "SKIPPED", reason, run_id, "side"))
    for path in ("/interventions", "/pipelines/orders"):
        page = ui.get("viewer", path).text
        assert SECRET_PIPELINE_PASSWORD not in page
        assert "retry with password *** &amp; &lt;again&gt;" in page
    ui.end_live_runs()


def test_the_drawings_own_style_is_the_one_inline_style_the_policy_allows(ui: Ui) -> None:
    answer = ui.get("viewer", "/pipelines/orders")
    styles = set(re.findall(r"<style>(.*?)</style>", answer.text, re.DOTALL))
    assert len(styles) == 1
    digest = base64.b64encode(hashlib.sha256(styles.pop().encode()).digest()).decode()
    policy = answer.headers["content-security-policy"]
    assert f"style-src 'self' 'sha256-{digest}';" in policy
    assert "unsafe-inline" not in policy
