"""Secret parameters and bearer tokens never appear in a response, a log record or AUD_ACTIONS."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.fixtures.served import SECRET_PASSWORD, SECRETS
from tests.integration.api.conftest import Api

READS = [
    "/api/v1/pipelines",
    "/api/v1/pipelines/vault",
    "/api/v1/pipelines/vault/steps",
    "/api/v1/pipelines/vault/runs",
    "/api/v1/audit",
    "/api/v1/audit?pipeline_code=vault",
    "/api/v1/validate",
    "/api/v1/validate?pipeline_code=vault",
    "/api/v1/tokens",
]


def test_secret_parameters_are_masked_in_every_response(api: Api) -> None:
    for path in READS:
        response = api.call("GET", path, "admin")
        assert response.status_code == 200, path
        for secret in SECRETS:
            assert secret not in response.text, (path, secret)

    changes = api.call("GET", "/api/v1/audit").json()["metadata_changes"]
    values = {
        change["after"]["parameter_name"]: change["after"]["parameter_value"]
        for change in changes
        if change["table_name"].endswith("PARAMETERS")
    }
    assert values["Api_Token"] == "***"
    assert values["DB_PASSWORD"] == "***"
    assert json.loads(values["INPUT_PARAMS"]) == {"user": "etl", "password": "***"}
    assert values["SCRIPT"] == "fetch.py"


def test_a_secret_in_an_attempt_log_is_masked_when_read(api: Api) -> None:
    attempt = api.attempt_with_log()
    log = api.call("GET", f"/api/v1/attempts/{attempt}")
    assert log.json()["has_log"] is True
    [row] = api.rows(
        "SELECT LOG_PATH AS path FROM AUD_TASK_ATTEMPTS WHERE ATTEMPT_ID = :a", a=attempt
    )
    with Path(row["path"]).open("a", encoding="utf-8") as sink:
        sink.write(f"a script printed password={SECRET_PASSWORD} by mistake\n")

    read = api.call("GET", f"/api/v1/attempts/{attempt}/log")

    assert "password=*** by mistake" in read.text
    assert SECRET_PASSWORD not in read.text


def test_a_bearer_token_is_never_logged_recorded_or_returned(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "etlc_" + "w" * 43
    caplog.set_level(logging.DEBUG)
    answers = [
        api.call("POST", "/api/v1/pipelines/orders/pause", "operator", {"reason": "redaction"}),
        api.call("POST", "/api/v1/pipelines/orders/resume", "operator", {}),
        api.call("POST", "/api/v1/runs/987654/cancel", "operator", {"reason": "missing run"}),
        api.call("GET", "/api/v1/pipelines", "viewer"),
        api.call("POST", "/api/v1/tokens", "viewer", {"name": "x", "role": "admin"}),
        api.call_with(wrong, "GET", "/api/v1/pipelines"),
    ]
    actions = json.dumps(api.rows("SELECT * FROM AUD_ACTIONS"), default=str)
    changes = json.dumps(api.rows("SELECT * FROM AUD_METADATA_CHANGES"), default=str)

    for token in [*api.tokens.values(), wrong]:
        assert not any(token in answer.text for answer in answers)
        assert token not in caplog.text
        assert token not in actions
        assert token not in changes
    assert any(answer.status_code == 404 for answer in answers)
