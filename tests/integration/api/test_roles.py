"""Every endpoint with each role: the roles below its own are refused (403) and change nothing;
its own role and those above are served. Without a token, every endpoint answers 401."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from httpx2 import Response

from tests.fixtures.served import ROLES
from tests.integration.api.conftest import Api, problem_of

Setup = Callable[[Api], dict[str, object]]


def nothing(_: Api) -> dict[str, object]:
    return {}


def live_run(api: Api) -> dict[str, object]:
    return {"run": api.live_run()}


def ended_run(api: Api) -> dict[str, object]:
    return {"run": api.ended_run()}


def settled_task(api: Api) -> dict[str, object]:
    return {"run": api.settled_task()}


def finished_run(api: Api) -> dict[str, object]:
    return {
        "run": api.rows("SELECT min(PIPELINE_RUN_ID) AS id FROM AUD_PIPELINES_RUN_LOG")[0]["id"]
    }


def attempt(api: Api) -> dict[str, object]:
    return {"attempt": api.attempt_with_log()}


def no_live_run(api: Api) -> dict[str, object]:
    api.end_live_runs()
    return {}


def unpaused(api: Api) -> dict[str, object]:
    api.call("POST", "/api/v1/pipelines/orders/resume", "operator", {})
    return {}


def paused(api: Api) -> dict[str, object]:
    api.call("POST", "/api/v1/pipelines/orders/pause", "operator", {"reason": "for the test"})
    return {}


_names = itertools.count(1)


def new_name(_: Api) -> dict[str, object]:
    return {"name": f"made_{next(_names)}"}


def live_token(api: Api) -> dict[str, object]:
    name = f"doomed_{next(_names)}"
    api.token(name, "viewer")
    return {"name": name}


PASSWORD = "a password of the role test"


def a_user(api: Api) -> dict[str, object]:
    name = f"person_{next(_names)}"
    made = api.call("POST", "/api/v1/users", "admin", {"name": name, "role": "viewer"})
    assert made.status_code == 201, made.text
    return {"name": name}


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    role: str
    status: int
    schema: str
    setup: Setup = nothing
    body: dict[str, object] | None = None

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


WHY: dict[str, object] = {"reason": "asked by the role test"}
ENDPOINTS = [
    Endpoint("GET", "/api/v1/pipelines", "viewer", 200, "etl-craft/list/1"),
    Endpoint("GET", "/api/v1/pipelines/orders", "viewer", 200, "etl-craft/graph/1"),
    Endpoint("GET", "/api/v1/pipelines/orders/steps", "viewer", 200, "etl-craft/steps/1"),
    Endpoint("GET", "/api/v1/pipelines/orders/runs", "viewer", 200, "etl-craft/history/1"),
    Endpoint("GET", "/api/v1/runs/{run}", "viewer", 200, "etl-craft/run/1", finished_run),
    Endpoint(
        "GET", "/api/v1/runs/{run}/tasks", "viewer", 200, "etl-craft/run-tasks/1", finished_run
    ),
    Endpoint(
        "GET",
        "/api/v1/runs/{run}/tasks/summary/explain",
        "viewer",
        200,
        "etl-craft/explain/1",
        finished_run,
    ),
    Endpoint("GET", "/api/v1/attempts/{attempt}", "viewer", 200, "etl-craft/attempt/1", attempt),
    Endpoint("GET", "/api/v1/audit", "viewer", 200, "etl-craft/audit/1"),
    Endpoint("GET", "/api/v1/validate", "viewer", 200, "etl-craft/validate/1"),
    Endpoint("GET", "/api/v1/project/health", "viewer", 200, "etl-craft/project-health/1"),
    Endpoint("GET", "/api/v1/interventions", "viewer", 200, "etl-craft/interventions/1"),
    Endpoint("GET", "/api/v1/pools", "viewer", 200, "etl-craft/pools/1"),
    Endpoint(
        "POST",
        "/api/v1/pipelines/orders/runs",
        "operator",
        202,
        "etl-craft/run/1",
        no_live_run,
        WHY,
    ),
    Endpoint(
        "POST",
        "/api/v1/pipelines/orders/backfills",
        "operator",
        202,
        "etl-craft/backfill/1",
        no_live_run,
        {"from": "2026-01-01", "to": "2026-01-02", **WHY},
    ),
    Endpoint(
        "POST",
        "/api/v1/pipelines/orders/pause",
        "operator",
        200,
        "etl-craft/pause/1",
        unpaused,
        WHY,
    ),
    Endpoint(
        "POST", "/api/v1/pipelines/orders/resume", "operator", 200, "etl-craft/pause/1", paused, {}
    ),
    Endpoint(
        "POST",
        "/api/v1/runs/{run}/cancel",
        "operator",
        200,
        "etl-craft/intervention/1",
        live_run,
        WHY,
    ),
    Endpoint(
        "POST",
        "/api/v1/runs/{run}/reopen",
        "operator",
        200,
        "etl-craft/intervention/1",
        ended_run,
        WHY,
    ),
    Endpoint(
        "POST",
        "/api/v1/runs/{run}/mark",
        "operator",
        200,
        "etl-craft/intervention/1",
        live_run,
        {"status": "FAILED", **WHY},
    ),
    Endpoint(
        "POST",
        "/api/v1/runs/{run}/tasks/side/mark",
        "operator",
        200,
        "etl-craft/intervention/1",
        live_run,
        {"status": "SKIPPED", "rows": 0, **WHY},
    ),
    Endpoint(
        "POST",
        "/api/v1/runs/{run}/tasks/side/rerun",
        "operator",
        202,
        "etl-craft/rerun/1",
        settled_task,
        WHY,
    ),
    Endpoint(
        "POST",
        "/api/v1/runs/{run}/tasks/side/skip",
        "operator",
        200,
        "etl-craft/intervention/1",
        live_run,
        WHY,
    ),
    Endpoint("GET", "/api/v1/tokens", "admin", 200, "etl-craft/tokens/1"),
    Endpoint(
        "POST", "/api/v1/tokens", "admin", 201, "etl-craft/token/1", new_name, {"role": "viewer"}
    ),
    Endpoint(
        "DELETE", "/api/v1/tokens/{name}", "admin", 200, "etl-craft/token-revoked/1", live_token
    ),
    Endpoint("GET", "/api/v1/users", "admin", 200, "etl-craft/users/1"),
    Endpoint(
        "POST",
        "/api/v1/users",
        "admin",
        201,
        "etl-craft/user/1",
        new_name,
        {"role": "viewer", "password": PASSWORD},
    ),
    Endpoint(
        "PUT",
        "/api/v1/users/{name}/role",
        "admin",
        200,
        "etl-craft/user/1",
        a_user,
        {"role": "developer"},
    ),
    Endpoint(
        "PUT",
        "/api/v1/users/{name}/password",
        "admin",
        200,
        "etl-craft/user/1",
        a_user,
        {"password": PASSWORD},
    ),
    Endpoint("POST", "/api/v1/users/{name}/disable", "admin", 200, "etl-craft/user/1", a_user),
    Endpoint("POST", "/api/v1/users/{name}/enable", "admin", 200, "etl-craft/user/1", a_user),
]


def _request(api: Api, endpoint: Endpoint, role: str | None, values: dict[str, object]) -> Response:
    body = endpoint.body
    if endpoint.setup is new_name and body is not None:
        body = {**body, "name": values["name"]}
    return api.call(endpoint.method, endpoint.path.format(**values), role, body)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_each_role_is_refused_or_served(api: Api, endpoint: Endpoint) -> None:
    allowed = ROLES[ROLES.index(endpoint.role) :]
    for role in ROLES:
        values = endpoint.setup(api)
        before = api.counts()
        response = _request(api, endpoint, role, values)
        if role in allowed:
            assert response.status_code == endpoint.status, (role, response.text)
            assert response.json()["schema"] == endpoint.schema
        else:
            assert response.status_code == 403, (role, response.text)
            assert role in problem_of(response)["detail"]
            assert api.counts() == before


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=str)
def test_without_a_token_every_endpoint_answers_401(api: Api, endpoint: Endpoint) -> None:
    values = endpoint.setup(api)
    before = api.counts()
    response = _request(api, endpoint, None, values)

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "bearer token" in problem_of(response)["detail"]
    assert api.counts() == before


def test_health_and_readiness_need_no_token(api: Api) -> None:
    assert api.client.get("/healthz").json() == {"status": "ok"}
    ready = api.client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["ready"] is True
    assert api.client.get("/api/v1/health").json() == ready.json()
