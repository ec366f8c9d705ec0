"""A run's SLA is decided once, by the finalize that first ends it, and never re-measured."""

from __future__ import annotations

import pytest

from tests.fixtures.metadata import TESTER, execute
from tests.fixtures.projects import ProjectOnDisk
from tests.integration.control.conftest import Cli, one, run_status
from tests.integration.running.test_supervisor_sql import CHAIN

SLA_OF_AN_HOUR = "UPDATE CFG_PIPELINES SET SLA_MINUTES = 60 WHERE PIPELINE_CODE = 'orders';"
TWO_DAYS = 2 * 24 * 3600


@pytest.fixture
def orders(project: ProjectOnDisk) -> ProjectOnDisk:
    project.migrate("0001_orders.sql", CHAIN)
    project.migrate("0002_sla.sql", SLA_OF_AN_HOUR)
    return project


def _started_earlier(project: ProjectOnDisk, run_id: int, seconds: int) -> None:
    """As if the run had started ``seconds`` earlier than it did."""
    with project.engine.transaction(TESTER) as conn:
        execute(
            conn,
            "UPDATE AUD_PIPELINES_RUN_LOG SET START_DATE = etl_craft_add_seconds(START_DATE, :s) "
            "WHERE PIPELINE_RUN_ID = :r",
            s=-seconds,
            r=run_id,
        )


def _sla(project: ProjectOnDisk, run_id: int) -> str | None:
    found = one(
        project, "SELECT SLA_STATUS FROM AUD_PIPELINES_RUN_LOG WHERE PIPELINE_RUN_ID = :r", r=run_id
    )
    return None if found is None else str(found)


def _run(cli: Cli, run_id: int) -> None:
    done = cli("run", "--pipeline_code", "orders", "--run-id", str(run_id))
    assert done.code == 0, done.out + done.err


def _reopen(cli: Cli, run_id: int) -> None:
    done = cli("reopen", "--pipeline_code", "orders", "--run-id", str(run_id), "--reason", "redo")
    assert done.code == 0, done.err


def test_a_run_that_ends_within_its_sla_met_it(orders: ProjectOnDisk, cli: Cli) -> None:
    run_id = orders.new_run("orders")
    _run(cli, run_id)
    assert (run_status(orders, run_id), _sla(orders, run_id)) == ("SUCCESS", "MET")


def test_a_run_that_ends_past_its_sla_missed_it(orders: ProjectOnDisk, cli: Cli) -> None:
    run_id = orders.new_run("orders")
    _started_earlier(orders, run_id, TWO_DAYS)
    _run(cli, run_id)
    assert (run_status(orders, run_id), _sla(orders, run_id)) == ("SUCCESS", "MISSED")


def test_a_met_sla_stays_met_after_a_reopen_ends_the_run_again_days_later(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    run_id = orders.new_run("orders")
    _run(cli, run_id)
    _reopen(cli, run_id)
    assert (run_status(orders, run_id), _sla(orders, run_id)) == ("IN-PROGRESS", "MET")
    _started_earlier(orders, run_id, TWO_DAYS)

    _run(cli, run_id)

    assert (run_status(orders, run_id), _sla(orders, run_id)) == ("SUCCESS", "MET")


def test_a_missed_sla_stays_missed_after_a_reopen_ends_the_run_again(
    orders: ProjectOnDisk, cli: Cli
) -> None:
    run_id = orders.new_run("orders")
    _started_earlier(orders, run_id, TWO_DAYS)
    _run(cli, run_id)
    _reopen(cli, run_id)
    _started_earlier(orders, run_id, -TWO_DAYS)  # back to now: a new measure would say MET

    _run(cli, run_id)

    assert (run_status(orders, run_id), _sla(orders, run_id)) == ("SUCCESS", "MISSED")
