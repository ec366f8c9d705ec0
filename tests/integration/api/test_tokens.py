"""Tokens: printed once, stored as SHA-256 only, refused once revoked or expired, and the name
of the actor of every action taken with them."""

from __future__ import annotations

import hashlib
import json

import pytest

from etl_craft.cli.main import run as run_cli
from tests.fixtures.metadata import TESTER, execute
from tests.integration.api.conftest import Api, problem_of


def cli(api: Api, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = run_cli(["--config", str(api.project.config), *args])
    return code, capsys.readouterr().out


def test_token_create_prints_the_token_once_and_stores_only_its_sha256(
    api: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(api, capsys, "token", "create", "--name", "ci", "--role", "operator")
    token = out.splitlines()[0]
    assert code == 0
    assert token.startswith("etlc_")
    assert len(token) > 40

    stored = api.rows("SELECT * FROM CFG_API_TOKENS WHERE NAME = 'ci'")
    [digest] = api.rows("SELECT TOKEN_SHA256 AS sha FROM CFG_API_TOKENS WHERE NAME = 'ci'")
    assert digest["sha"] == hashlib.sha256(token.encode()).hexdigest()
    assert token not in json.dumps(stored, default=str)
    assert api.call_with(token, "GET", "/api/v1/pipelines").status_code == 200

    code, listed = cli(api, capsys, "--format", "json", "token", "list")
    assert code == 0
    assert token not in listed
    assert digest["sha"] not in listed
    assert {"name": "ci", "role": "operator"}.items() <= next(
        t for t in json.loads(listed)["tokens"] if t["name"] == "ci"
    ).items()


def test_a_revoked_token_is_refused(api: Api, capsys: pytest.CaptureFixture[str]) -> None:
    token = api.token("leaving", "operator")
    assert api.call_with(token, "GET", "/api/v1/pipelines").status_code == 200

    code, out = cli(api, capsys, "token", "revoke", "--name", "leaving")
    refused = api.call_with(token, "GET", "/api/v1/pipelines")

    assert code == 0
    assert "revoked" in out
    assert refused.status_code == 401
    assert "revoked" in problem_of(refused)["detail"]


def test_an_expired_token_is_refused(api: Api) -> None:
    token = api.token("shortlived", "viewer", expires="1h")
    assert api.call_with(token, "GET", "/api/v1/pipelines").status_code == 200
    with api.project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            "UPDATE CFG_API_TOKENS SET EXPIRES_AT = :past WHERE NAME = 'shortlived'",
            past=_past(api),
        )

    refused = api.call_with(token, "GET", "/api/v1/pipelines")

    assert refused.status_code == 401
    assert "expired" in problem_of(refused)["detail"]


def test_an_unknown_or_malformed_token_is_refused(api: Api) -> None:
    for header in ("Bearer etlc_not-a-real-token", "Basic dXNlcjpwYXNz", "Bearer", "etlc_x"):
        response = api.client.get("/api/v1/pipelines", headers={"Authorization": header})
        assert response.status_code == 401, header
        problem_of(response)


def test_the_tokens_name_is_the_actor_of_what_it_does(api: Api) -> None:
    api.end_live_runs()
    token = api.token("nightly_ci", "operator")
    response = api.call_with(
        token, "POST", "/api/v1/pipelines/orders/runs", {"reason": "nightly load"}
    )
    assert response.status_code == 202
    run_id = response.json()["run_id"]

    [run] = api.rows(
        "SELECT STARTED_BY AS who, STARTED_BY_KIND AS kind, STATUS AS status "
        "FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r",
        r=run_id,
    )
    [action] = api.rows(
        "SELECT ACTOR AS who, ACTOR_KIND AS kind, COMMAND AS command, ARGUMENTS AS arguments "
        "FROM AUD_ACTIONS WHERE PIPELINE_RUN_ID = :r",
        r=run_id,
    )
    assert run == {"who": "nightly_ci", "kind": "HUMAN", "status": "QUEUED"}
    assert (action["who"], action["kind"], action["command"]) == ("nightly_ci", "HUMAN", "run")
    assert json.loads(action["arguments"])["reason"] == "nightly load"
    assert response.headers["location"] == f"/api/v1/projects/default/runs/{run_id}"


def test_admins_create_list_and_revoke_tokens_over_the_api(api: Api) -> None:
    created = api.call("POST", "/api/v1/tokens", "admin", {"name": "robot", "role": "viewer"})
    token = created.json()["token"]
    listed = api.call("GET", "/api/v1/tokens", "admin")
    revoked = api.call("DELETE", "/api/v1/tokens/robot", "admin")
    again = api.call("DELETE", "/api/v1/tokens/robot", "admin")

    assert created.status_code == 201
    assert api.call_with(token, "GET", "/api/v1/pipelines").status_code == 401
    assert token not in listed.text
    assert "robot" in [t["name"] for t in listed.json()["tokens"]]
    assert revoked.json()["name"] == "robot"
    assert again.status_code == 404
    actions = api.rows(
        "SELECT ACTOR AS who, OUTCOME AS outcome FROM AUD_ACTIONS "
        "WHERE COMMAND = 'token' AND ARGUMENTS LIKE :a ORDER BY ACTION_ID",
        a='%"action": "revoke"%"robot"%',
    )
    assert actions == [
        {"who": "admin_token", "outcome": "REQUESTED"},
        {"who": "admin_token", "outcome": "REFUSED"},
    ]


def _past(api: Api) -> object:
    from datetime import UTC, datetime

    from etl_craft.core.time import to_sqlite_text

    past = datetime(2020, 1, 1, tzinfo=UTC)
    return to_sqlite_text(past) if api.project.engine.dialect == "sqlite" else past
