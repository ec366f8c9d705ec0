"""Every answer carries the security headers; a NUL, a repeated query parameter or an oversized
body is refused (422, 413) before anything is written; redirects never name the Host header;
and each request leaves one access log line that never shows a token."""

from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient

from etl_craft.core.errors import ConfigurationError
from etl_craft_api.app import create_app
from etl_craft_api.settings import load_api_settings
from tests.integration.api.conftest import Api, problem_of

ACCESS_LOGGER = "etl_craft_api.access"
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
EXPECTED_HEADERS = {
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "content-security-policy": "frame-ancestors 'none'",
    "x-frame-options": "DENY",
}


def test_every_answer_carries_the_security_headers(api: Api) -> None:
    too_big = b"{" + b" " * DEFAULT_MAX_BODY_BYTES + b"}"
    answers = {
        "ok": api.call("GET", "/api/v1/pipelines"),
        "new token": api.call("POST", "/api/v1/tokens", "admin", {"name": "hdr", "role": "viewer"}),
        "no token": api.call("GET", "/api/v1/pipelines", None),
        "not found": api.call("GET", "/api/v1/nowhere"),
        "wrong method": api.call("PUT", "/api/v1/pipelines"),
        "invalid": api.call("GET", "/api/v1/runs/abc"),
        "too large": api.client.post("/api/v1/tokens", content=too_big),
        "health": api.client.get("/healthz"),
    }
    for what, answer in answers.items():
        assert EXPECTED_HEADERS.items() <= answer.headers.items(), (what, answer.headers)
        assert "server" not in answer.headers, what
    assert answers["new token"].status_code == 201
    assert answers["new token"].json()["token"].startswith("etlc_")
    assert answers["too large"].status_code == 413
    assert str(DEFAULT_MAX_BODY_BYTES) in problem_of(answers["too large"])["detail"]


def test_a_trailing_slash_is_not_redirected_to_the_host_header(api: Api) -> None:
    answer = api.client.get(
        "/api/v1/pipelines/",
        headers={"Host": "evil.example", "Authorization": f"Bearer {api.tokens['viewer']}"},
        follow_redirects=False,
    )

    assert "evil.example" not in answer.headers.get("location", "")
    assert answer.status_code == 404
    problem_of(answer)


@pytest.mark.parametrize(
    "body",
    [
        {"run_key": "manual:a\u0000b", "reason": "nul in the key"},
        {"run_key": "manual:nul", "reason": "a reason\u0000with a NUL"},
    ],
)
def test_a_nul_in_a_body_is_a_422_and_writes_nothing(api: Api, body: dict[str, str]) -> None:
    api.end_live_runs()
    before = api.counts()

    answer = api.call("POST", "/api/v1/pipelines/orders/runs", "operator", body)

    assert answer.status_code == 422, answer.text
    assert "NUL" in problem_of(answer)["detail"]
    assert "\u0000" not in answer.text
    assert api.counts() == before


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/nowh%00ere",
        "/api/v1/audit?pipeline_code=orders%00",
        "/api/v1/audit?since%00=2026-01-01",
    ],
)
def test_a_nul_in_the_path_or_query_is_a_422(api: Api, path: str) -> None:
    answer = api.call("GET", path, "viewer")

    assert answer.status_code == 422, answer.text
    assert "NUL" in problem_of(answer)["detail"]
    assert "\u0000" not in answer.text


def test_a_query_parameter_given_twice_is_a_422_naming_it(api: Api) -> None:
    answer = api.call("GET", "/api/v1/pipelines/orders/runs?limit=1&before=9&limit=2")

    assert answer.status_code == 422
    found = problem_of(answer)
    assert found["errors"] == [{"loc": ["query", "limit"], "msg": "is given 2 times; send it once"}]


def test_each_request_logs_one_line_with_its_actor_and_never_a_token(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    token = api.tokens["viewer"]
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)

    api.call("GET", "/api/v1/pipelines?limit=1")
    api.client.get(f"/api/v1/pipelines?access_token={token}&Api_Key=k3y&pipeline_code=orders")
    api.client.get(f"/api/v1/attempts/{token}")

    lines = [record.getMessage() for record in caplog.records if record.name == ACCESS_LOGGER]
    assert len(lines) == 3
    assert lines[0].startswith('"GET /api/v1/pipelines?limit=1" 422 ')
    assert lines[0].endswith(" ms by anonymous")  # refused before its token was looked at
    assert lines[1].startswith(
        '"GET /api/v1/pipelines?access_token=***&Api_Key=***&pipeline_code=orders" 422 '
    )
    assert lines[2].startswith('"GET /api/v1/attempts/etlc_***" 401 ')
    assert token not in caplog.text
    assert "k3y" not in caplog.text


def test_the_log_line_names_the_tokens_name_as_actor(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=ACCESS_LOGGER)

    api.call("GET", "/api/v1/pipelines")

    [line] = [record.getMessage() for record in caplog.records if record.name == ACCESS_LOGGER]
    assert line.startswith('"GET /api/v1/pipelines" 200 ')
    assert line.endswith(" ms by viewer_token")


def test_the_body_limit_follows_its_environment_variable(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ETL_CRAFT_API_MAX_BODY_BYTES", "16")
    limit = load_api_settings().max_body_bytes
    with TestClient(create_app(api.ctx, max_body_bytes=limit)) as client:
        small = client.post("/api/v1/pipelines/orders/runs", content=b"{}")
        large = client.post("/api/v1/pipelines/orders/runs", content=b'{"reason": "seventeen"}')

    assert small.status_code == 401
    assert large.status_code == 413
    assert "at most 16 bytes" in problem_of(large)["detail"]


def test_a_body_limit_out_of_range_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ETL_CRAFT_API_MAX_BODY_BYTES", "99999999999999999999")
    with pytest.raises(ConfigurationError) as refused:
        load_api_settings()
    assert "ETL_CRAFT_API_MAX_BODY_BYTES: Input should be less than or equal to" in str(
        refused.value
    )
    assert "a whole number from 1 to 2147483647" in str(refused.value)
