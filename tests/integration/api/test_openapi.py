"""The committed OpenAPI document is the one the app generates."""

from __future__ import annotations

import json
from pathlib import Path

from etl_craft_api.commands import openapi_text

COMMITTED = Path(__file__).parents[3] / "docs" / "reference" / "openapi.json"


def test_the_committed_openapi_document_is_current() -> None:
    assert COMMITTED.read_text() == openapi_text(), (
        "docs/reference/openapi.json is stale: regenerate it with "
        "etl-craft api --write-openapi docs/reference/openapi.json"
    )


def test_the_openapi_document_declares_bearer_auth_and_every_endpoint() -> None:
    document = json.loads(openapi_text())
    assert document["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    assert {
        "/api/v1/pipelines/{code}/runs",
        "/api/v1/runs/{run_id}/cancel",
        "/api/v1/attempts/{attempt_id}/log",
        "/api/v1/tokens/{name}",
    } <= document["paths"].keys()
