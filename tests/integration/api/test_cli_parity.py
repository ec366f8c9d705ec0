"""The same operation through the CLI (--format json) and through the API gives the same document."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest

from etl_craft.cli.main import run as run_cli
from etl_craft.core.time import as_utc
from tests.integration.api.conftest import Api, problem_of


def cli_json(api: Api, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    capsys.readouterr()
    code = run_cli(["--config", str(api.project.config), "--format", "json", *args])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def first_run(api: Api) -> int:
    return int(api.rows("SELECT min(PIPELINE_RUN_ID) AS id FROM AUD_PIPELINES_RUN_LOG")[0]["id"])


def test_reads_give_the_same_document(api: Api, capsys: pytest.CaptureFixture[str]) -> None:
    run = str(first_run(api))
    pairs = [
        (("list",), "/api/v1/pipelines"),
        (("graph", "--pipeline_code", "orders"), "/api/v1/pipelines/orders"),
        (("steps", "--pipeline_code", "orders"), "/api/v1/pipelines/orders/steps"),
        (
            ("history", "--pipeline_code", "orders", "--limit", "3"),
            "/api/v1/pipelines/orders/runs?limit=3",
        ),
        (("status", "--pipeline_code", "orders", "--run-id", run), f"/api/v1/runs/{run}"),
        (
            ("explain", "--pipeline_code", "orders", "--task_code", "summary", "--run-id", run),
            f"/api/v1/runs/{run}/tasks/summary/explain",
        ),
        (("audit", "--pipeline_code", "orders"), "/api/v1/audit?pipeline_code=orders"),
        (("validate",), "/api/v1/validate"),
    ]
    for args, path in pairs:
        served = api.call("GET", path)
        assert served.status_code == 200, (path, served.text)
        assert served.json() == cli_json(api, capsys, *args), path


def test_explain_at_a_past_moment_gives_the_same_document(
    api: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    run = first_run(api)
    (started,) = api.rows(
        "SELECT a.STARTED_AT AS started_at FROM AUD_TASK_ATTEMPTS a "
        "JOIN AUD_TASK_RUN_LOG t ON t.TASK_RUN_ID = a.TASK_RUN_ID "
        "JOIN CFG_TASKS k ON k.TASK_ID = t.TASK_ID "
        "WHERE t.PIPELINE_RUN_ID = :r AND k.TASK_CODE = 'summary'",
        r=run,
    )
    at = as_utc(started["started_at"])
    assert at is not None
    served = api.call("GET", f"/api/v1/runs/{run}/tasks/summary/explain?at={quote(at.isoformat())}")
    assert served.status_code == 200, served.text
    args = ("--task_code", "summary", "--run-id", str(run), "--at", at.isoformat())
    by_cli = cli_json(api, capsys, "explain", "--pipeline_code", "orders", *args)
    assert served.json() == by_cli
    assert (by_cli["at"], by_cli["state"], by_cli["run_status"]) == (
        at.isoformat(),
        "RUNNING",
        "IN-PROGRESS",
    )


def test_explain_at_a_malformed_moment_is_a_bad_request(api: Api) -> None:
    run = first_run(api)
    answer = api.call("GET", f"/api/v1/runs/{run}/tasks/summary/explain?at=noon")
    assert answer.status_code == 400, answer.text
    assert problem_of(answer)["detail"].startswith("--at 'noon' is not an ISO 8601 moment")


def test_history_pages_by_run_id(api: Api) -> None:
    api.live_run()
    api.ended_run()
    everything = api.call("GET", "/api/v1/pipelines/orders/runs?limit=500").json()["runs"]
    first = api.call("GET", "/api/v1/pipelines/orders/runs?limit=2").json()["runs"]
    after = first[-1]["run_id"]
    rest = api.call("GET", f"/api/v1/pipelines/orders/runs?limit=500&before={after}").json()

    assert len(everything) >= 3
    assert [r["run_id"] for r in first + rest["runs"]] == [r["run_id"] for r in everything]


def test_a_pause_and_resume_give_the_same_document(
    api: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    volatile = {"action_id", "pause_id", "paused_at", "resumed_at", "paused_by", "resumed_by"}

    def stable(document: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in document.items() if key not in volatile}

    api.call("POST", "/api/v1/pipelines/orders/resume", "operator", {})
    by_cli = [
        cli_json(api, capsys, "pause", "--pipeline_code", "orders", "--reason", "upgrade"),
        cli_json(api, capsys, "resume", "--pipeline_code", "orders"),
    ]
    by_api = [
        api.call("POST", "/api/v1/pipelines/orders/pause", "operator", {"reason": "upgrade"}),
        api.call("POST", "/api/v1/pipelines/orders/resume", "operator", {}),
    ]

    assert [stable(doc) for doc in by_cli] == [stable(r.json()) for r in by_api]
    assert by_api[0].json()["paused_by"] == "operator_token"
    assert by_cli[0]["paused_by"] != "operator_token"
