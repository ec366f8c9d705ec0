"""The catalog's publication URL in the Engine DB: recorded, renewed, a change refused naming
both URLs (and recorded REFUSED), and moved only when asked to, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import UsageError
from etl_craft.enginedb.connection import EngineDB
from etl_craft.operations.catalog.publications import (
    Hosting,
    PublicationRequest,
    publish_catalog,
)
from etl_craft.operations.context import OperationContext
from tests.fixtures.metadata import TESTER, execute

FIRST = "https://data.example.com/catalog/"
SECOND = "https://other.example.com/"


def _stored(engine_db: EngineDB) -> list[tuple[object, ...]]:
    with engine_db.read() as conn:
        sql = "SELECT PUBLIC_URL, HOSTING, PREVIOUS_URL, PUBLISHED_BY FROM AUD_CATALOG_PUBLICATIONS"
        return [tuple(row) for row in execute(conn, sql).all()]


def _actions(engine_db: EngineDB) -> list[tuple[object, ...]]:
    with engine_db.read() as conn:
        sql = (
            "SELECT OUTCOME, ARGUMENTS FROM AUD_ACTIONS WHERE COMMAND = 'catalog-publish' "
            "ORDER BY ACTION_ID"
        )
        return [tuple(row) for row in execute(conn, sql).all()]


def test_a_url_is_recorded_renewed_refused_when_changed_and_replaced_on_request(
    engine_db: EngineDB,
) -> None:
    ctx = OperationContext(project=None, connector=None, engine=engine_db, actor=TESTER)

    first = publish_catalog(ctx, PublicationRequest(FIRST.rstrip("/"), Hosting.BASE_URL))
    again = publish_catalog(ctx, PublicationRequest(FIRST, Hosting.BASE_URL))
    with pytest.raises(UsageError) as refused:
        publish_catalog(ctx, PublicationRequest(SECOND, Hosting.NGROK))
    stored_after_refusal = _stored(engine_db)
    moved = publish_catalog(ctx, PublicationRequest(SECOND, Hosting.NGROK, replace_url=True))

    assert (first.public_url, first.replaced, again.replaced) == (FIRST, False, False)
    assert again.published_at >= first.published_at
    assert again.first_published_at == first.first_published_at
    message = str(refused.value)
    assert f"published at {FIRST}" in message
    assert f"would publish it at {SECOND}" in message
    assert "--replace-url" in message
    assert stored_after_refusal == [(FIRST, "BASE_URL", None, TESTER.name)]
    assert (moved.public_url, moved.previous_url, moved.replaced) == (SECOND, FIRST, True)
    assert _stored(engine_db) == [(SECOND, "NGROK", FIRST, TESTER.name)]
    outcomes = [outcome for outcome, _ in _actions(engine_db)]
    assert outcomes == ["REQUESTED", "REQUESTED", "REFUSED", "REQUESTED"]
    assert '"replace_url": true' in str(_actions(engine_db)[-1][1])
