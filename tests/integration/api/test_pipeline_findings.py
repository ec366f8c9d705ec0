"""A pipeline that cannot run, seen through the API: its views carry the blocking findings and
a trigger is refused before any run exists."""

from __future__ import annotations

import pytest

from tests.chaos.harness import QUICK
from tests.integration.api.conftest import Api, problem_of
from tests.integration.isolation.rings import CYCLE, RING


@pytest.fixture(scope="module")
def ringed(api: Api) -> Api:
    (api.project.root / "ingestion_scripts" / "quick.py").write_text(QUICK)
    api.project.migrate("0003_ring.sql", RING.format(schedule_column="", schedule_value=""))
    return api


def test_the_pipeline_views_carry_the_cycle_of_the_ring_and_nothing_for_the_others(
    ringed: Api,
) -> None:
    listed = ringed.call("GET", "/api/v1/pipelines")
    shown = ringed.call("GET", "/api/v1/pipelines/ring")

    assert listed.status_code == 200, listed.text
    findings = {p["pipeline_code"]: p["blocking_findings"] for p in listed.json()["pipelines"]}
    assert findings["orders"] == []
    assert [f["check"] for f in findings["ring"]] == ["cycle"]
    assert shown.status_code == 200, shown.text
    (finding,) = shown.json()["blocking_findings"]
    assert finding["message"].startswith(CYCLE)


def test_a_trigger_of_the_ring_is_refused_and_creates_no_run(ringed: Api) -> None:
    before = ringed.counts()["AUD_PIPELINES_RUN_LOG"]

    response = ringed.call("POST", "/api/v1/pipelines/ring/runs", role="operator", body={})

    assert response.status_code == 409
    assert "pipeline ring cannot run" in problem_of(response)["detail"]
    assert ringed.counts()["AUD_PIPELINES_RUN_LOG"] == before
