"""What each role sees and may do, as the API's role matrix says: a viewer reads, an operator
also pauses and resumes, and every action is recorded under the token's name."""

from __future__ import annotations

import pytest

from tests.fixtures.served import ROLES
from tests.integration.ui.conftest import Ui

PAGES = ("/", "/pipelines", "/pipelines/orders", "/interventions", "/workers")


def open_pause(ui: Ui, pipeline: str) -> list[dict[str, object]]:
    return ui.rows(
        "SELECT s.PAUSED_BY AS paused_by, s.REASON AS reason FROM AUD_PIPELINE_PAUSES s "
        "JOIN CFG_PIPELINES p ON p.PIPELINE_ID = s.PIPELINE_ID "
        "WHERE p.PIPELINE_CODE = :p AND s.RESUMED_AT IS NULL",
        p=pipeline,
    )


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_every_page(ui: Ui, role: str) -> None:
    for path in PAGES:
        answer = ui.get(role, path)
        assert answer.status_code == 200, (path, answer.text[:500])
        assert f"{role}_token" in answer.text


def test_a_viewer_sees_no_action_button(ui: Ui) -> None:
    for path in ("/pipelines", "/pipelines/orders"):
        page = ui.get("viewer", path).text
        assert "/pause" not in page
        assert "/resume" not in page
    operator = ui.get("operator", "/pipelines").text
    assert 'action="/pipelines/orders/pause"' in operator


def test_a_viewer_may_not_pause_even_with_the_csrf_token(ui: Ui) -> None:
    answer = ui.post("viewer", "/pipelines/orders/pause", {"reason": "viewer tries"})
    assert answer.status_code == 403
    assert "this request needs operator or above" in answer.text
    assert open_pause(ui, "orders") == []


def test_a_pause_without_the_csrf_token_is_refused(ui: Ui) -> None:
    answer = ui.post("operator", "/pipelines/orders/pause", {"reason": "forged"}, csrf=False)
    assert answer.status_code == 403
    assert open_pause(ui, "orders") == []


def test_a_pause_without_a_session_is_refused(ui: Ui) -> None:
    answer = ui.browser().post("/pipelines/orders/pause", data={"reason": "anonymous"})
    assert answer.status_code == 401
    assert open_pause(ui, "orders") == []


def test_a_pause_asks_for_its_reason(ui: Ui) -> None:
    answer = ui.post("operator", "/pipelines/orders/pause", {"reason": " "})
    assert answer.status_code == 400
    assert "reason" in answer.text
    assert "Traceback" not in answer.text
    assert open_pause(ui, "orders") == []


def test_an_operator_pauses_and_resumes_as_the_tokens_name(ui: Ui) -> None:
    answer = ui.post("operator", "/pipelines/orders/pause", {"reason": "warehouse upgrade"})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/pipelines/orders"
    assert open_pause(ui, "orders") == [
        {"paused_by": "operator_token", "reason": "warehouse upgrade"}
    ]
    page = ui.get("viewer", "/pipelines").text
    assert "PAUSED" in page
    assert "warehouse upgrade" in page
    again = ui.post("admin", "/pipelines/orders/pause", {"reason": "twice"})
    assert again.status_code == 409
    assert "is paused already" in again.text
    resumed = ui.post("admin", "/pipelines/orders/resume", {"reason": "upgrade done"})
    assert resumed.status_code == 303
    assert open_pause(ui, "orders") == []
    log = ui.get("viewer", "/interventions").text
    assert "PAUSE" in log
    assert "RESUME" in log
    assert "operator_token" in log
    assert "admin_token" in log
    actors = ui.rows(
        "SELECT ACTOR AS actor, COMMAND AS command FROM AUD_ACTIONS "
        "WHERE COMMAND IN ('pause', 'resume') AND OUTCOME = 'REQUESTED' ORDER BY ACTION_ID"
    )
    assert actors[-2:] == [
        {"actor": "operator_token", "command": "pause"},
        {"actor": "admin_token", "command": "resume"},
    ]
