"""Projects sharing one Engine DB are isolated: the API of project ``neighbour`` neither reads
nor changes the objects of project ``default`` (tokens, pipelines, runs, attempts, logs), and its
answers describe none of them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from etl_craft.core.actor import SYSTEM
from etl_craft.enginedb.migrations import initialize
from etl_craft.operations.context import ContextRequest, build_context
from etl_craft_api.app import create_app
from tests.fixtures.metadata import TESTER
from tests.fixtures.served import ROLES
from tests.integration.api.conftest import Api, problem_of

NEIGHBOUR = "neighbour"


@pytest.fixture(scope="module")
def neighbour(api: Api, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """The API of a second project, on the Engine DB of ``api``'s project."""
    root = tmp_path_factory.mktemp(NEIGHBOUR) / "etl-craft"
    root.mkdir()
    (root / ".env").write_text(f"NEIGHBOUR_ENGINE_URL={api.project.connector.engine_url}\n")
    (root / "craft-connector.yml").write_text(
        "Engine:\n  url: ${NEIGHBOUR_ENGINE_URL}\n"
        "Warehouse:\n  type: duckdb\n  path: warehouse.duckdb\n"
        f"Orchestration:\n  project: {NEIGHBOUR}\n"
    )
    initialize(api.project.engine, SYSTEM, project_code=NEIGHBOUR, timezone="UTC")
    ctx = build_context(ContextRequest(config=root / "craft-connector.yml", cwd=root))
    made = Api(api.project, ctx, TestClient(create_app(ctx)))
    made.tokens = {role: made.token(f"{NEIGHBOUR}_{role}", role) for role in ROLES}
    yield made
    made.client.close()
    made.ctx.close()


def test_an_admin_cannot_revoke_another_projects_token(api: Api, neighbour: Api) -> None:
    refused = neighbour.call("DELETE", "/api/v1/tokens/viewer_token", "admin")

    assert refused.status_code == 404
    assert "default" not in problem_of(refused)["detail"]
    assert api.call("GET", "/api/v1/pipelines", "viewer").status_code == 200


def test_a_name_another_project_uses_is_a_neutral_conflict(api: Api, neighbour: Api) -> None:
    before = api.counts()["CFG_API_TOKENS"]
    refused = neighbour.call(
        "POST", "/api/v1/tokens", "admin", {"name": "admin_token", "role": "viewer"}
    )

    detail = problem_of(refused)["detail"]
    assert refused.status_code == 409
    assert detail == "token name admin_token is taken; choose another name"
    assert TESTER.name not in refused.text
    assert api.counts()["CFG_API_TOKENS"] == before


def test_a_name_the_project_uses_is_a_conflict_that_describes_it(api: Api) -> None:
    refused = api.call("POST", "/api/v1/tokens", "admin", {"name": "viewer_token", "role": "admin"})

    assert refused.status_code == 409
    assert "role viewer" in problem_of(refused)["detail"]


def test_the_token_list_holds_only_the_projects_tokens(api: Api, neighbour: Api) -> None:
    listed = {t["name"] for t in neighbour.call("GET", "/api/v1/tokens", "admin").json()["tokens"]}

    assert listed == {f"{NEIGHBOUR}_{role}" for role in ROLES}


def test_another_projects_token_is_refused_without_naming_its_project(
    api: Api, neighbour: Api
) -> None:
    refused = api.call_with(neighbour.tokens["admin"], "GET", "/api/v1/pipelines")

    assert refused.status_code == 401
    assert NEIGHBOUR not in problem_of(refused)["detail"].replace(f"{NEIGHBOUR}_admin", "")


def test_another_projects_runs_attempts_logs_and_pipelines_are_not_found(
    api: Api, neighbour: Api
) -> None:
    run_id, attempt_id = api.ended_run(), api.attempt_with_log()
    reads = [
        f"/api/v1/runs/{run_id}",
        f"/api/v1/runs/{run_id}/tasks",
        f"/api/v1/runs/{run_id}/tasks/side/explain",
        f"/api/v1/attempts/{attempt_id}",
        f"/api/v1/attempts/{attempt_id}/log",
        "/api/v1/pipelines/orders",
        "/api/v1/pipelines/orders/runs",
    ]
    for path in reads:
        answer = neighbour.call("GET", path, "viewer")
        assert answer.status_code == 404, (path, answer.text)
        assert "land" not in problem_of(answer)["detail"]
    assert neighbour.call("GET", "/api/v1/pipelines", "viewer").json()["pipelines"] == []


def test_another_projects_runs_and_pipelines_cannot_be_changed(api: Api, neighbour: Api) -> None:
    run_id = api.live_run()
    before = api.counts()
    changes = [
        (f"/api/v1/runs/{run_id}/cancel", {"reason": "x"}),
        (f"/api/v1/runs/{run_id}/tasks/side/mark", {"status": "SUCCESS", "reason": "x"}),
        (f"/api/v1/runs/{run_id}/tasks/side/skip", {"reason": "x"}),
        ("/api/v1/pipelines/orders/pause", {"reason": "x"}),
        ("/api/v1/pipelines/orders/runs", {"reason": "x"}),
    ]
    for path, body in changes:
        answer = neighbour.call("POST", path, "operator", body)
        assert answer.status_code == 404, (path, answer.text)
    after = api.counts()
    # Each refusal is recorded as the neighbour's REFUSED action; nothing else is written.
    assert after.pop("AUD_ACTIONS") - before.pop("AUD_ACTIONS") <= len(changes)
    assert after == before


def test_each_projects_paths_answer_its_tokens_under_their_roles(api: Api, neighbour: Api) -> None:
    # One service (the neighbour's configuration) answers for every project of its Engine DB.
    ours = neighbour.call("GET", f"/api/v1/projects/{NEIGHBOUR}/pipelines", "viewer")
    theirs = neighbour.call_with(api.tokens["viewer"], "GET", "/api/v1/projects/default/pipelines")
    assert (ours.status_code, ours.json()["project"], ours.json()["pipelines"]) == (
        200,
        NEIGHBOUR,
        [],
    )
    assert theirs.status_code == 200, theirs.text
    assert theirs.json()["project"] == "default"
    assert "orders" in {p["pipeline_code"] for p in theirs.json()["pipelines"]}
    listed = neighbour.call("GET", "/api/v1/projects", "viewer").json()
    assert (listed["current"], {"default", NEIGHBOUR} <= set(listed["projects"])) == (
        NEIGHBOUR,
        True,
    )

    # A viewer reads and cannot act; an operator acts, on its own project only.
    before = api.counts()
    paused = "/api/v1/projects/default/pipelines/orders/pause"
    refused = neighbour.call_with(api.tokens["viewer"], "POST", paused, {"reason": "x"})
    assert refused.status_code == 403, refused.text
    elsewhere = neighbour.call("POST", paused, "operator", {"reason": "x"})
    assert elsewhere.status_code == 401, elsewhere.text
    assert NEIGHBOUR not in problem_of(elsewhere)["detail"].replace(f"{NEIGHBOUR}_operator", "")
    assert api.counts()["AUD_PIPELINE_PAUSES"] == before["AUD_PIPELINE_PAUSES"]
    done = neighbour.call_with(api.tokens["operator"], "POST", paused, {"reason": "x"})
    resumed = "/api/v1/projects/default/pipelines/orders/resume"
    assert done.status_code == 200, done.text
    assert neighbour.call_with(api.tokens["operator"], "POST", resumed, {}).status_code == 200

    # The earlier paths still answer, on the service's own project.
    alias = api.call("GET", "/api/v1/pipelines", "viewer")
    assert alias.status_code == 200
    assert alias.headers["Deprecation"] == "true"
    assert alias.headers["Link"] == '</api/v1/projects/default/pipelines>; rel="successor-version"'
    assert "Deprecation" not in ours.headers
    assert alias.json() == api.call("GET", "/api/v1/projects/default/pipelines", "viewer").json()


def test_the_paths_without_a_project_are_deprecated_in_openapi(api: Api) -> None:
    paths = api.client.get("/api/v1/openapi.json").json()["paths"]
    old, new = paths["/api/v1/pipelines"]["get"], paths["/api/v1/projects/{project}/pipelines"]
    assert old.get("deprecated") is True
    assert "deprecated" not in new["get"]
    assert [p["name"] for p in new["get"]["parameters"] if p["in"] == "path"] == ["project"]
    assert "deprecated" not in paths["/api/v1/users"]["get"]
