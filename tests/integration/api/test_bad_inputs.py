"""Bad input is refused with a problem document (4xx) and writes nothing: traversal, NUL, huge
and mistyped identifiers, unknown fields and query parameters, and a GET that would change state."""

from __future__ import annotations

import pytest

from tests.integration.api.conftest import Api, problem_of

HUGE = "a" * 10_000
BAD_PATHS = [
    "/api/v1/pipelines/..%2F..%2Fx",
    "/api/v1/pipelines/%2e%2e",
    "/api/v1/pipelines/%2e%2e/runs",
    "/api/v1/pipelines/or%00ders",
    f"/api/v1/pipelines/{HUGE}",
    "/api/v1/pipelines/1orders",
    "/api/v1/pipelines/orders%20x/steps",
    "/api/v1/runs/abc",
    "/api/v1/runs/0",
    "/api/v1/runs/-3",
    "/api/v1/runs/1.5",
    "/api/v1/runs/99999999999999999999999",
    f"/api/v1/runs/{HUGE}",
    "/api/v1/runs/1/tasks/%2e%2e/explain",
    "/api/v1/runs/1/tasks/../../../etc/passwd/explain",
    "/api/v1/attempts/%00",
    "/api/v1/attempts/1/log?offset=-1",
    "/api/v1/attempts/1/log?offset=x",
    "/api/v1/pipelines/orders/runs?limit=0",
    "/api/v1/pipelines/orders/runs?limit=100000",
    "/api/v1/pipelines/orders/runs?before=abc",
    "/api/v1/pipelines/orders/runs?colour=blue",
    "/api/v1/audit?since=yesterday",
    "/api/v1/audit?pipeline_code=..%2F..",
    "/api/v1/pipelines?limit=1",
    "/api/v1/nowhere",
]
BAD_POSTS = [
    ("/api/v1/pipelines/%2e%2e/runs", {}),
    (f"/api/v1/pipelines/{HUGE}/runs", {}),
    ("/api/v1/pipelines/orders/runs", {"run_date": "not a date"}),
    ("/api/v1/pipelines/orders/runs", {"run_date": 20260101}),
    ("/api/v1/pipelines/orders/runs", {"reason": HUGE}),
    ("/api/v1/pipelines/orders/runs", {"reason": "x", "priority": 9}),
    ("/api/v1/pipelines/orders/runs", ["not", "an", "object"]),
    ("/api/v1/pipelines/orders/backfills", {"from": "2026-01-01", "reason": "x"}),
    (
        "/api/v1/pipelines/orders/backfills",
        {"from": "2026-02-01", "to": "2026-01-01", "reason": "x"},
    ),
    (
        "/api/v1/pipelines/orders/backfills",
        {"from": "2020-01-01", "to": "2026-01-01", "reason": "x"},
    ),
    ("/api/v1/pipelines/orders/pause", {}),
    ("/api/v1/pipelines/orders/pause", {"reason": "   "}),
    ("/api/v1/pipelines/orders/pause", {"reason": "x\u0000y", "force": True}),
    ("/api/v1/pipelines/nothing_here/pause", {"reason": "x"}),
    ("/api/v1/runs/0/cancel", {"reason": "x"}),
    ("/api/v1/runs/abc/cancel", {"reason": "x"}),
    ("/api/v1/runs/987654321/cancel", {"reason": "x"}),
    ("/api/v1/runs/1/mark", {"status": "DONE", "reason": "x"}),
    ("/api/v1/runs/1/tasks/side/mark", {"status": "SUCCESS", "reason": "x", "rows": -1}),
    ("/api/v1/runs/1/tasks/side/mark", {"status": "SUCCESS", "reason": "x", "rows": "many"}),
    ("/api/v1/runs/1/tasks/no_such_task/mark", {"status": "SUCCESS", "reason": "x"}),
    ("/api/v1/runs/1/tasks/side/rerun", {"reason": "x", "with_downstream": "sometimes"}),
    ("/api/v1/runs/1/tasks/%2e%2e/skip", {"reason": "x"}),
]


def test_bad_paths_and_queries_are_4xx_problems(api: Api) -> None:
    before = api.counts()
    for path in BAD_PATHS:
        response = api.client.get(path, headers=_admin(api))
        assert 400 <= response.status_code < 500, (path[:80], response.status_code)
        found = problem_of(response)
        assert HUGE not in response.text
        assert "\u0000" not in found["detail"]
    assert api.counts() == before


def test_bad_requests_to_change_state_are_refused_and_write_nothing(api: Api) -> None:
    api.end_live_runs()
    before, refused_before = api.counts(), _refused(api)
    for path, body in BAD_POSTS:
        response = api.client.post(path, headers=_admin(api), json=body)
        assert 400 <= response.status_code < 500, (path[:80], body, response.text[:300])
        problem_of(response)
        assert HUGE not in response.text
    after = api.counts()
    # A refusal by an operation is itself recorded (REFUSED); nothing else is written.
    assert after.pop("AUD_ACTIONS") - before.pop("AUD_ACTIONS") == _refused(api) - refused_before
    assert after == before


def test_a_body_that_is_not_json_is_refused(api: Api) -> None:
    before = api.counts()
    response = api.client.post(
        "/api/v1/pipelines/orders/pause",
        headers={**_admin(api), "Content-Type": "application/json"},
        content=b"\xff\xfe not json",
    )
    assert response.status_code in (400, 422)
    problem_of(response)
    assert api.counts() == before


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/v1/runs/1/cancel"),
        ("GET", "/api/v1/pipelines/orders/pause"),
        ("GET", "/api/v1/runs/1/tasks/side/rerun"),
        ("PUT", "/api/v1/pipelines/orders/runs"),
        ("DELETE", "/api/v1/runs/1"),
        ("POST", "/api/v1/runs/1"),
        ("PATCH", "/api/v1/tokens"),
    ],
)
def test_a_wrong_method_is_a_405_problem_and_changes_nothing(
    api: Api, method: str, path: str
) -> None:
    before = api.counts()
    response = api.client.request(method, path, headers=_admin(api))
    assert response.status_code == 405
    assert method in problem_of(response)["detail"]
    assert response.headers["allow"]
    assert api.counts() == before


def _admin(api: Api) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.tokens['admin']}"}


def _refused(api: Api) -> int:
    return len(api.rows("SELECT ACTION_ID FROM AUD_ACTIONS WHERE OUTCOME = 'REFUSED'"))


def test_an_id_that_is_not_plain_digits_is_a_422_though_it_reads_as_a_number(api: Api) -> None:
    run_id, attempt_id = api.ended_run(), api.attempt_with_log()
    assert api.call("GET", f"/api/v1/runs/{run_id}").status_code == 200
    lenient = [
        f"/api/v1/runs/{run_id}.0",
        f"/api/v1/runs/+{run_id}",
        f"/api/v1/runs/%20{run_id}",
        f"/api/v1/attempts/{attempt_id}.0",
        f"/api/v1/attempts/{attempt_id}/log?offset=%2B0",
        "/api/v1/pipelines/orders/runs?limit=1.0",
    ]
    for path in lenient:
        response = api.call("GET", path)
        assert response.status_code == 422, (path, response.text[:300])
        assert "expected digits only" in problem_of(response)["detail"]


@pytest.mark.parametrize(
    "shape", ["Bearer  {token}", "Bearer\t{token}", "Bearer {token} ", "Bearer {token} x"]
)
def test_an_authorization_header_not_exactly_bearer_space_token_is_refused(
    api: Api, shape: str
) -> None:
    header = shape.format(token=api.tokens["viewer"])
    response = api.client.get("/api/v1/pipelines", headers={"Authorization": header})
    assert response.status_code == 401, response.text[:300]
    assert "expected 'Bearer " in problem_of(response)["detail"]
    exact = {"Authorization": f"bearer {api.tokens['viewer']}"}  # the scheme ignores case
    assert api.client.get("/api/v1/pipelines", headers=exact).status_code == 200
