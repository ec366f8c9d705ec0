"""`etl-craft run` records its request in AUD_ACTIONS; a paused pipeline's run creates nothing."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import ACTOR, Cli, actions, one, run_status
from tests.integration.running.test_supervisor_sql import CHAIN


@pytest.fixture
def orders(project: ProjectOnDisk) -> ProjectOnDisk:
    project.migrate("0001_orders.sql", CHAIN)
    return project


def runs(project: ProjectOnDisk) -> int:
    return int(one(project, "SELECT count(*) FROM AUD_PIPELINES_RUN_LOG"))


def test_a_plain_run_records_its_request_naming_the_run(orders: ProjectOnDisk, cli: Cli) -> None:
    ran = cli.json("run", "--pipeline_code", "orders", "--run-key", "manual:audited")

    assert ran.code == 0, ran.err
    run_id = ran.document()["run_id"]
    assert run_status(orders, run_id) == "SUCCESS"
    (action,) = actions(orders, "run")
    assert (action["actor"], action["outcome"], action["pipeline"], action["run_id"]) == (
        ACTOR,
        "REQUESTED",
        "orders",
        run_id,
    )
    assert json.loads(action["arguments"])["run_key"] == "manual:audited"


def test_a_paused_pipelines_run_creates_nothing_and_says_how_to_resume(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    assert cli("pause", "--pipeline_code", "orders", "--reason", "warehouse upgrade").code == 0

    ran = cli("run", "--pipeline_code", "orders")

    assert ran.code == 0, ran.err
    assert runs(orders) == 0
    assert "pipeline orders" in ran.out
    assert "is paused" in ran.out
    assert "warehouse upgrade" in ran.out
    assert "etl-craft resume --pipeline orders" in ran.out
    ((action),) = actions(orders, "run")
    assert (action["outcome"], action["pipeline"], action["run_id"]) == (
        "REQUESTED",
        "orders",
        None,
    )


def test_a_paused_projects_run_names_the_project_pause_in_json(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    assert cli("pause", "--project", "--reason", "month end").code == 0

    ran = cli.json("run", "--pipeline_code", "orders")

    assert ran.code == 0, ran.err
    assert runs(orders) == 0
    document = ran.document()
    assert document["schema"] == "etl-craft/run-paused/1"
    assert (document["pipeline_code"], document["scope"], document["reason"]) == (
        "orders",
        "project",
        "month end",
    )
    assert document["resume_command"] == "etl-craft resume --project default"


def test_reconcile_records_its_request(orders: ProjectOnDisk, cli: Cli) -> None:
    reconciled = cli("reconcile")

    assert reconciled.code == 0, reconciled.err
    assert [(a["actor"], a["outcome"]) for a in actions(orders, "reconcile")] == [
        (ACTOR, "REQUESTED")
    ]
