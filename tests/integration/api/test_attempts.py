"""An attempt and its log, read from a byte offset on, as a client follows a running task."""

from __future__ import annotations

from pathlib import Path

from tests.integration.api.conftest import Api, problem_of


def test_an_attempts_log_is_read_from_an_offset_on(api: Api) -> None:
    attempt = api.attempt_with_log()
    [row] = api.rows(
        "SELECT LOG_PATH AS path FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a", a=attempt
    )
    content = Path(row["path"]).read_bytes()

    whole = api.call("GET", f"/api/v1/attempts/{attempt}/log")
    tail = api.call("GET", f"/api/v1/attempts/{attempt}/log?offset=10")
    beyond = api.call("GET", f"/api/v1/attempts/{attempt}/log?offset={len(content) + 100}")

    assert whole.status_code == 200
    assert whole.headers["content-type"].startswith("text/plain")
    assert whole.content == content
    assert int(whole.headers["x-next-offset"]) == len(content)
    assert tail.content == content[10:]
    assert beyond.content == b""
    assert int(beyond.headers["x-next-offset"]) == len(content)


def test_an_attempt_is_shown_with_its_task_and_run(api: Api) -> None:
    attempt = api.attempt_with_log()
    found = api.call("GET", f"/api/v1/attempts/{attempt}").json()

    assert found["schema"] == "etl-craft/attempt/1"
    assert found["attempt_id"] == attempt
    assert found["pipeline_code"] == "orders"
    assert found["status"] == "SUCCESS"
    assert "log_path" not in found


def test_an_attempt_without_a_log_or_of_another_project_is_404(api: Api) -> None:
    missing = api.call("GET", "/api/v1/attempts/987654321/log")
    assert missing.status_code == 404
    assert "987654321" in problem_of(missing)["detail"]
