"""The API process serves its own Prometheus metrics at /metrics, without a token."""

from __future__ import annotations

from fastapi.testclient import TestClient

from etl_craft_api.app import create_app
from tests.fixtures.projects import ProjectOnDisk


def test_the_api_serves_prometheus_metrics_with_engine_db_statement_latency(
    sqlite_project: ProjectOnDisk,
) -> None:
    client = TestClient(create_app(None))  # the app times the process's statements from now
    with sqlite_project.engine.read() as conn:
        conn.scalar("metrics_clock")  # an observation the scrape must show

    answer = client.get("/metrics")

    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    assert 'etl_craft_enginedb_statement_seconds_count{statement="metrics_clock"}' in answer.text
    assert "/metrics" not in str(create_app(None).openapi())
