"""What an operator does from the run and backfill pages, recorded with the token's name as the
actor and the reason; a viewer sees no action and is refused one; a form without CSRF is refused."""

from __future__ import annotations

from httpx2 import Response

from tests.fixtures.run_history import RunHistory
from tests.integration.ui.conftest import Ui
from tests.integration.ui.runs_ui import runs_ui

__all__ = ["runs_ui"]
INTERVENTIONS = (
    "SELECT i.KIND AS kind, i.REASON AS reason, i.REQUESTED_BY AS actor, i.TO_STATUS AS status, "
    "i.ROWS_WRITTEN AS rows_written FROM AUD_RUN_INTERVENTIONS i "
    "WHERE i.PIPELINE_RUN_ID = :run AND i.REQUESTED_BY <> 'tester@tests' ORDER BY i.INTERVENTION_ID"
)
COUNTS = (
    "SELECT (SELECT count(*) FROM AUD_RUN_INTERVENTIONS) AS interventions, "
    "(SELECT count(*) FROM AUD_ACTIONS) AS actions"
)


def recorded(ui: Ui, run_id: int) -> list[tuple[object, ...]]:
    return [tuple(row.values()) for row in ui.rows(INTERVENTIONS, run=run_id)]


def shown_after(ui: Ui, role: str, answer: Response, run_id: int) -> Response:
    """The run page an action redirected to: a reload of it submits nothing again."""
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"/runs/{run_id}"
    return ui.get(role, f"/runs/{run_id}")


def test_a_viewer_sees_no_action_and_is_refused_one(runs_ui: tuple[Ui, RunHistory]) -> None:
    ui, history = runs_ui
    before = ui.rows(COUNTS)
    page = ui.get("viewer", f"/runs/{history.live}")
    backfills = ui.get("viewer", "/backfills")
    refused = ui.post("viewer", f"/runs/{history.live}/cancel", {"reason": "a viewer tries"})

    assert page.status_code == 200
    assert 'method="post" action="/runs/' not in page.text
    assert 'action="/backfills' not in backfills.text
    assert refused.status_code == 403
    assert "this request needs operator" in refused.text
    assert ui.rows(COUNTS) == before
    assert operator_page_has_actions(ui, history.live)


def operator_page_has_actions(ui: Ui, run_id: int) -> bool:
    page = ui.get("operator", f"/runs/{run_id}").text
    return all(
        f'action="/runs/{run_id}/{action}"' in page for action in ("cancel", "rerun", "mark-task")
    )


def test_a_post_without_the_sessions_csrf_token_is_refused(runs_ui: tuple[Ui, RunHistory]) -> None:
    ui, history = runs_ui
    before = ui.rows(COUNTS)
    answer = ui.post("operator", f"/runs/{history.live}/cancel", {"reason": "forged"}, csrf=False)

    assert answer.status_code == 403
    assert "CSRF token is missing" in answer.text
    assert ui.rows(COUNTS) == before


def test_an_operator_marks_a_task_with_rows_and_a_reason(runs_ui: tuple[Ui, RunHistory]) -> None:
    ui, history = runs_ui
    fields = {"task": "land", "status": "SUCCESS", "rows": "5", "reason": "loaded by hand"}
    answer = shown_after(
        ui, "operator", ui.post("operator", f"/runs/{history.live}/mark-task", fields), history.live
    )

    assert answer.status_code == 200, answer.text
    assert 'class="message info"' in answer.text
    assert 'class="message info"' not in ui.get("operator", f"/runs/{history.live}").text
    assert recorded(ui, history.live) == [
        ("MARK", "loaded by hand", "operator_token", "SUCCESS", 5)
    ]


def test_an_operator_cancels_a_live_run_with_a_reason(runs_ui: tuple[Ui, RunHistory]) -> None:
    ui, history = runs_ui
    cancelled = ui.post("operator", f"/runs/{history.live}/cancel", {"reason": "wrong day"})
    answer = shown_after(ui, "operator", cancelled, history.live)
    [run] = ui.rows(
        "SELECT STATUS AS status FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r",
        r=history.live,
    )

    assert answer.status_code == 200, answer.text
    assert f"run {history.live} cancelled" in answer.text
    assert run["status"] == "CANCELLED"
    assert recorded(ui, history.live)[-1] == (
        "CANCEL",
        "wrong day",
        "operator_token",
        "CANCELLED",
        None,
    )


def test_an_operator_reruns_a_failed_task_with_downstream_and_its_next_attempt_is_queued(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, history = runs_ui
    page = ui.get("operator", f"/runs/{history.failed}").text
    fields = {"task": "fetch", "reason": "source is back", "with_downstream": "on"}
    answer = shown_after(
        ui, "operator", ui.post("operator", f"/runs/{history.failed}/rerun", fields), history.failed
    )
    requests = ui.rows(
        "SELECT k.TASK_CODE AS task, d.REQUESTED_BY AS actor, d.REASON AS reason "
        "FROM AUD_DOWNSTREAM_RERUNS d JOIN CFG_TASKS k ON k.TASK_ID = d.TASK_ID "
        "WHERE d.PIPELINE_RUN_ID = :r AND d.SETTLED_AT IS NULL",
        r=history.failed,
    )
    attempts = ui.rows(
        "SELECT a.ATTEMPT_NUMBER AS n, a.STATUS AS status, a.REQUESTED_BY AS actor "
        "FROM AUD_TASK_ATTEMPTS a JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE t.PIPELINE_RUN_ID = :r AND k.TASK_CODE = 'fetch' ORDER BY a.ATTEMPT_NUMBER",
        r=history.failed,
    )

    assert 'type="checkbox" id="rerun-with-downstream" name="with_downstream"' in page
    assert answer.status_code == 200, answer.text
    assert f"queued a rerun of fetch in run {history.failed}" in answer.text
    assert "redoes its downstream task runs" in answer.text
    assert [tuple(row.values()) for row in requests] == [
        ("fetch", "operator_token", "source is back")
    ]
    assert [(a["n"], a["status"], a["actor"]) for a in attempts] == [
        (1, "FAILED", "tester@tests"),
        (2, "QUEUED", "operator_token"),
    ]
    assert ("RERUN", "source is back", "operator_token") in [
        row[:3] for row in recorded(ui, history.failed)
    ]


def test_an_operator_marks_an_ended_run_and_a_refusal_shows_the_operations_message(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, history = runs_ui
    marked = ui.post(
        "operator", f"/runs/{history.succeeded}/mark", {"status": "FAILED", "reason": "bad totals"}
    )
    refused = ui.post("operator", f"/runs/{history.succeeded}/cancel", {"reason": "too late"})
    no_reason = ui.post(
        "operator", f"/runs/{history.succeeded}/mark", {"status": "SUCCESS", "reason": " "}
    )

    assert shown_after(ui, "operator", marked, history.succeeded).status_code == 200
    assert recorded(ui, history.succeeded) == [
        ("MARK", "bad totals", "operator_token", "FAILED", None)
    ]
    assert refused.status_code == 409
    assert "there is nothing to cancel" in refused.text
    assert 'class="message error"' in refused.text
    assert no_reason.status_code == 400
    assert "needs a reason" in no_reason.text


def test_the_backfills_page_shows_progress_and_an_operator_stops_and_starts_one(
    runs_ui: tuple[Ui, RunHistory],
) -> None:
    ui, history = runs_ui
    page = ui.get("operator", "/backfills")
    stopped = ui.post("operator", "/backfills/solo/stop", {"reason": "October is wrong"})
    started = ui.post(
        "operator",
        "/backfills",
        {"pipeline": "solo", "from": "2026-09-01", "to": "2026-09-02", "reason": "September"},
    )
    fragment = ui.get("viewer", "/partials/backfills")

    assert page.status_code == 200
    assert "0 of 3 date(s) finished" in page.text
    assert 'action="/backfills/solo/stop"' in page.text
    assert stopped.status_code == 200, stopped.text
    assert "cancel requested for 3 run(s)" in stopped.text
    assert [recorded(ui, run)[-1][:3] for run in history.backfills] == [
        ("CANCEL", "October is wrong", "operator_token")
    ] * 3
    assert started.status_code == 202, started.text
    assert "queued 2 backfill run(s) of solo, 2026-09-01 to 2026-09-02" in started.text
    assert "<html" not in fragment.text
    assert "2026-09-01 to 2026-10-03" in fragment.text


def test_a_nul_in_a_form_is_a_422_and_writes_nothing(runs_ui: tuple[Ui, RunHistory]) -> None:
    ui, history = runs_ui
    before = ui.rows(COUNTS)
    paused = "SELECT count(*) AS n FROM AUD_PIPELINE_PAUSES"
    paused_before = ui.rows(paused)
    posts = [
        ("/pipelines/orders/pause", {"reason": "x\x00y"}),
        (f"/runs/{history.live}/cancel", {"reason": "x\x00y"}),
        (
            f"/runs/{history.live}/mark-task",
            {"task": "land", "status": "SUCCESS", "reason": "x\x00y"},
        ),
    ]
    for path, fields in posts:
        answer = ui.post("operator", path, fields)
        assert answer.status_code == 422, (path, answer.text[:300])
        assert "field reason holds a NUL character" in answer.text
        assert "\x00" not in answer.text
    assert ui.rows(COUNTS) == before
    assert ui.rows(paused) == paused_before
