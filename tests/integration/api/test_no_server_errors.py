"""No request the OpenAPI document allows makes the API answer with a server error (5xx).

Schemathesis generates requests for every operation in the app's own OpenAPI document and
sends them in-process, as an admin, to a SQLite project; a small example budget keeps it quick.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import Case

from etl_craft_api.commands import openapi_text
from tests.integration.api.conftest import Api

pytestmark = pytest.mark.parametrize("api", ["sqlite"], indirect=True)

schema = schemathesis.openapi.from_dict(json.loads(openapi_text()))


@schema.parametrize()
@settings(
    max_examples=5,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_no_request_gets_a_server_error(case: Case[Any], api: Api) -> None:
    headers = {"Authorization": f"Bearer {api.tokens['admin']}"}
    response = case.call(app=api.client.app, headers=headers)
    assert response.status_code < 500, (
        f"{case.method} {case.formatted_path} answered {response.status_code}: "
        f"{response.text[:500]}\nreproduce: {case.as_curl_command(headers)}"
    )
