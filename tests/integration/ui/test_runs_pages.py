"""The runs grid, a run's page with its explain panel, and an attempt's live log tail."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fixtures.run_history import FLAKY_ERROR, SECRET_VALUE, RunHistory
from tests.integration.ui.conftest import Ui
from tests.integration.ui.runs_ui import runs_ui

__all__ = ["runs_ui"]
ROW = re.compile(r'<tr data-run="(\d+)">(.*?)</tr>', re.S)
CELL = re.compile(r'data-task="([^"]+)"[^>]*>.*?<span class="word">([A-Z -]+)</span>', re.S)
TOOK = re.compile(r'data-task="([^"]+)"[^>]*>.*?<span class="took">(\d+ s)</span>', re.S)


def grid_rows(html: str) -> dict[int, dict[str, str]]:
    """Each run's task statuses as the grid shows them, by run id and task code."""
    return {int(run): dict(CELL.findall(cells)) for run, cells in ROW.findall(html)}


def test_the_grid_shows_each_runs_task_statuses_as_words(runs_ui: tuple[Ui, RunHistory]) -> None:
    ui, history = runs_ui
    page = ui.get("viewer", "/runs")

    assert page.status_code == 200
    rows = grid_rows(page.text)
    assert set(rows) == set(history.all_runs)
    assert rows[history.succeeded] == {"land": "SUCCESS", "summary": "SUCCESS", "side": "SUCCESS"}
    assert rows[history.failed] == {"fetch": "FAILED", "after": "SKIPPED"}
    assert rows[history.live] == {"land": "NOT RUN", "summary": "NOT RUN", "side": "SUCCESS"}
    succeeded = dict(ROW.findall(page.text))[str(history.succeeded)]
    assert {task for task, _ in TOOK.findall(succeeded)} == {"land", "summary", "side"}
    assert 'class="status status-failed">FAILED</span>' in page.text


def test_the_grid_fragment_is_one_request_for_the_whole_grid_and_keeps_the_filters(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, history = runs_ui
    fragment = ui.get("viewer", "/partials/runs-grid", status="FAILED")

    assert fragment.status_code == 200
    assert "<html" not in fragment.text
    assert fragment.text.count("hx-trigger=") == 1
    assert 'hx-get="/partials/runs-grid?status=FAILED"' in fragment.text
    assert set(grid_rows(fragment.text)) == {history.failed}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"status": "CANCELLED"}, "cancelled"),
        ({"kind": "BACKFILL"}, "backfills"),
        ({"since": "2026-10-02", "until": "2026-10-02"}, "second_backfill"),
        ({"pipeline": "flaky"}, "failed"),
    ],
)
def test_the_grid_filters_by_status_kind_date_and_pipeline(
    runs_ui: tuple[Ui, RunHistory], params: dict[str, str], expected: str
) -> None:
    ui, history = runs_ui
    wanted = {
        "cancelled": {history.cancelled},
        "backfills": set(history.backfills),
        "second_backfill": {history.backfills[1]},
        "failed": {history.failed},
    }

    assert set(grid_rows(ui.get("viewer", "/runs", **params).text)) == wanted[expected]


def test_the_grid_pages_by_run_id_with_links_to_older_runs(runs_ui: tuple[Ui, RunHistory]) -> None:
    ui, history = runs_ui
    first = ui.get("viewer", "/runs", limit="3")
    older = re.search(r'href="/runs\?([^"]+)" rel="next"', first.text)
    assert older is not None
    second = ui.client("viewer").get(f"/runs?{older[1].replace('&amp;', '&')}")

    assert sorted(grid_rows(first.text), reverse=True) == list(history.all_runs[:3])
    assert sorted(grid_rows(second.text), reverse=True) == list(history.all_runs[3:6])
    assert "Newest runs" in second.text


def test_a_bad_filter_is_refused_with_the_operations_message(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, _ = runs_ui
    page = ui.get("viewer", "/runs", status="BROKEN")

    assert page.status_code == 400
    assert "status &#39;BROKEN&#39; is not a known value; expected one of" in page.text


def test_a_run_page_shows_its_tasks_attempts_and_errors(runs_ui: tuple[Ui, RunHistory]) -> None:
    ui, history = runs_ui
    page = ui.get("viewer", f"/runs/{history.failed}")
    [attempt] = ui.rows(
        "SELECT a.ATTEMPT_ID AS id, a.EXIT_CODE AS code FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "WHERE t.PIPELINE_RUN_ID = :run",
        run=history.failed,
    )

    assert page.status_code == 200
    assert FLAKY_ERROR in page.text
    assert f'<a href="/attempts/{attempt["id"]}">#1</a>' in page.text
    assert f"exit {attempt['code']}" in page.text
    assert f'hx-get="/partials/runs/{history.failed}/tasks"' in page.text
    assert f'href="/pipelines/flaky?run={history.failed}"' in page.text
    fragment = ui.get("viewer", f"/partials/runs/{history.failed}/tasks")
    assert "<html" not in fragment.text
    assert FLAKY_ERROR in fragment.text


def test_a_tasks_explain_panel_is_a_fragment_of_the_explain_operation(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, history = runs_ui
    failed = ui.get("viewer", f"/partials/runs/{history.failed}/tasks/fetch/explain")
    skipped = ui.get("viewer", f"/partials/runs/{history.failed}/tasks/after/explain")

    assert failed.status_code == 200
    assert "<html" not in failed.text
    assert "Why fetch FAILED</h2>" in failed.text
    assert FLAKY_ERROR in failed.text
    assert re.search(r"Why after (was SKIPPED|is BLOCKED BY FAILURE)</h2>", skipped.text)
    assert "fetch" in skipped.text  # its dependency, and whether it was met


def task_cells(page: str, task: str) -> list[str]:
    row = page[page.index(f'<tr data-task="{task}">') :]
    return re.findall(r"<td[^>]*>(.*?)</td>", row[: row.index("</tr>")], re.S)


def test_a_tasks_run_time_is_its_attempts_and_its_instants_fit_one_line(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, history = runs_ui
    live = ui.get("viewer", f"/runs/{history.live}").text
    failed = ui.get("viewer", f"/runs/{history.failed}").text

    _status, _rows, started, _ended, marked_ran, *_ = task_cells(live, "side")
    assert marked_ran == '<span class="muted">—</span>'  # marked by hand: no attempt ran
    assert re.fullmatch(r'<time datetime="[^"]+" title="[^"]+Z">\d\d:\d\d:\d\d</time>', started)
    fetch_ran = task_cells(failed, "fetch")[4]
    assert re.fullmatch(r"\d+ s", fetch_ran), fetch_ran  # its one attempt's run time


def test_a_run_of_no_such_id_is_a_404_page(runs_ui: tuple[Ui, RunHistory]) -> None:
    ui, _ = runs_ui
    page = ui.get("viewer", "/runs/999999")

    assert page.status_code == 404
    assert "run 999999 does not exist" in page.text


def test_an_id_that_is_not_plain_digits_is_a_422_page(runs_ui: tuple[Ui, RunHistory]) -> None:
    ui, history = runs_ui
    attempt_id, _ = failed_attempt(ui, history)
    run_id = history.failed
    assert ui.get("viewer", f"/runs/{run_id}").status_code == 200
    for path in (
        f"/runs/{run_id}.0",
        f"/runs/+{run_id}",
        f"/attempts/{attempt_id}.0",
        f"/partials/attempts/{attempt_id}/log?offset=%2B0",
    ):
        page = ui.client("viewer").get(path)
        assert page.status_code == 422, (path, page.text[:300])
        assert "expected digits only" in page.text


def test_an_attempts_page_shows_its_exit_code_owner_host_and_a_masked_log(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, history = runs_ui
    attempt_id, path = failed_attempt(ui, history)
    with path.open("a", encoding="utf-8") as sink:
        sink.write(f"a script printed password={SECRET_VALUE} by mistake\n")
    page = ui.get("viewer", f"/attempts/{attempt_id}")
    [row] = ui.rows(
        "SELECT EXIT_CODE AS code, HOST AS host FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a",
        a=attempt_id,
    )

    assert page.status_code == 200
    assert SECRET_VALUE not in page.text
    assert "a script printed password=*** by mistake" in page.text
    assert "running PYTHON task fetch" in page.text
    assert f"<dt>Exit code</dt><dd>{row['code']}</dd>" in page.text
    assert f"<dt>Host</dt><dd>{row['host']}</dd>" in page.text
    assert "End of the log" in page.text


def test_the_log_tail_returns_only_what_follows_the_offset_masked(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, history = runs_ui
    attempt_id, path = failed_attempt(ui, history)
    end = path.stat().st_size
    with path.open("a", encoding="utf-8") as sink:
        sink.write(f"later: token {SECRET_VALUE} again\n")

    tail = ui.get("viewer", f"/partials/attempts/{attempt_id}/log", offset=str(end))

    assert tail.status_code == 200
    assert "<html" not in tail.text
    assert re.findall(r'<pre class="log-chunk">(.*?)</pre>', tail.text, re.S) == [
        "later: token *** again\n"
    ]
    assert f'data-offset="{path.stat().st_size}"' in tail.text


def failed_attempt(ui: Ui, history: RunHistory) -> tuple[int, Path]:
    [row] = ui.rows(
        "SELECT a.ATTEMPT_ID AS id, a.LOG_PATH AS path FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "WHERE t.PIPELINE_RUN_ID = :run AND a.ERROR_MESSAGE IS NOT NULL",
        run=history.failed,
    )
    return int(row["id"]), Path(str(row["path"]))


def test_an_attempt_whose_log_is_gone_still_shows_with_the_reason(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, history = runs_ui
    [row] = ui.rows(
        "SELECT a.ATTEMPT_ID AS id, a.LOG_PATH AS path FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "WHERE t.PIPELINE_RUN_ID = :run AND a.ERROR_MESSAGE IS NULL ORDER BY a.ATTEMPT_ID",
        run=history.succeeded,
    )[:1]
    log = Path(str(row["path"]))
    log.unlink()

    page = ui.get("viewer", f"/attempts/{row['id']}")
    tail = ui.get("viewer", f"/partials/attempts/{row['id']}/log", offset="0")

    assert page.status_code == 200
    assert "is gone from this host" in page.text
    assert tail.status_code == 200
    assert "is gone from this host" in tail.text
    for shown in (page.text, tail.text):  # no path on the server reaches a viewer
        assert str(log.parent) not in shown
        assert log.name not in shown
    assert "hx-trigger" not in tail.text


def test_a_pipeline_page_shows_its_runs_grid_and_the_selected_runs_timeline(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, history = runs_ui
    page = ui.get("viewer", "/pipelines/orders", run=str(history.succeeded)).text
    timeline = page[page.index('id="gantt"') :]
    timeline = timeline[: timeline.index("</svg>")]

    assert {history.succeeded, history.cancelled, history.live} <= set(grid_rows(page))
    assert history.failed not in grid_rows(page)  # a run of flaky
    lanes = dict(re.findall(r'<g class="lane" data-task="([^"]+)">(.*?)</g>', timeline, re.S))
    assert set(lanes) == {"land", "summary", "side"}
    for bars in lanes.values():
        assert re.search(r'<rect class="bar bar-success" x="[\d.]+"', bars)


def test_run_now_queues_a_run_for_the_server_with_its_date_and_reason(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, _ = runs_ui
    fields = {"run_date": "2026-10-01", "reason": "the late file of October arrived"}
    refused = ui.post("viewer", "/pipelines/flaky/run", fields)
    bad_date = ui.post("operator", "/pipelines/flaky/run", {**fields, "run_date": "2026-13-01"})
    no_reason = ui.post("operator", "/pipelines/flaky/run", {**fields, "reason": " "})
    busy = ui.post("operator", "/pipelines/solo/run", fields)  # its backfill is live
    done = ui.post("operator", "/pipelines/flaky/run", fields)

    assert refused.status_code == 403
    assert bad_date.status_code == 400
    assert "run date &#39;2026-13-01&#39; is not a date; expected YYYY-MM-DD" in bad_date.text
    assert no_reason.status_code == 400
    assert "Run now needs a reason" in no_reason.text
    assert busy.status_code == 409
    assert "a new run waits until it ends" in busy.text
    assert done.status_code == 303
    run_id = int(done.headers["location"].rsplit("/", 1)[1])
    [run] = ui.rows(
        "SELECT r.STATUS AS status, r.RUN_DATE AS run_date, p.PIPELINE_CODE AS code "
        "FROM AUD_PIPELINES_RUN_LOG r JOIN CFG_PIPELINES p ON p.PIPELINE_ID = r.PIPELINE_ID "
        "WHERE r.PIPELINE_RUN_ID = :r",
        r=run_id,
    )
    assert (run["status"], str(run["run_date"])[:10], run["code"]) == (
        "QUEUED",
        "2026-10-01",
        "flaky",
    )
    [action] = ui.rows(
        "SELECT ACTOR AS actor, ARGUMENTS AS arguments FROM AUD_ACTIONS "
        "WHERE PIPELINE_RUN_ID = :r AND COMMAND = 'run'",
        r=run_id,
    )
    assert action["actor"] == "operator_token"
    assert "the late file of October arrived" in str(action["arguments"])
    shown = ui.client("operator").get(done.headers["location"]).text
    assert f"run {run_id} of flaky for 2026-10-01 is QUEUED" in shown
