"""A number out of its range, given to the installed etl-craft: a clear error, never a traceback."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import ExitCode
from tests.integration.cli.conftest import CONNECTOR, Site

HUGE = "99999999999999999999"


@pytest.mark.parametrize(
    "command",
    [
        ("history", "--pipeline_code", "orders", "--limit", HUGE),
        ("preview", "--task_code", "load", "--limit", HUGE),
        ("audit", "--limit", HUGE),
        ("lineage", "--depth", HUGE),
        ("logs", "--attempt", "0"),
        ("server", "--ingestion-slots", "-1"),
    ],
    ids=lambda command: command[0],
)
def test_an_option_out_of_range_is_a_usage_error(
    sqlite_site: Site, command: tuple[str, ...]
) -> None:
    done = sqlite_site.run(*command)

    assert done.returncode == ExitCode.USAGE, done.stderr
    assert f"{command[-1]} is out of range; expected" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_setting_out_of_range_is_a_configuration_error(sqlite_site: Site) -> None:
    config = sqlite_site.project / "craft-connector.yml"
    config.write_text(CONNECTOR + f"  max_parallel_tasks: {HUGE}\n")

    done = sqlite_site.run("list")

    assert done.returncode == ExitCode.CONFIGURATION, done.stderr
    assert (
        f"Orchestration.max_parallel_tasks is {HUGE}; expected a number of tasks at once: a "
        "whole number from 1 to 10000" in done.stderr
    )


def test_a_spec_number_out_of_range_fails_plan_at_its_line(sqlite_site: Site) -> None:
    assert sqlite_site.run("init-db").returncode == 0
    pipelines = sqlite_site.project / "pipelines"
    pipelines.mkdir()
    (pipelines / "orders.yml").write_text(
        f"description: Orders\nmax_parallel_tasks: {HUGE}\ntasks:\n"
        "  load: {action: CREATE_TABLE, target: dm.x, source_sql: SELECT 1 AS x}\n"
    )

    done = sqlite_site.run("plan")

    assert done.returncode == ExitCode.METADATA, done.stderr
    assert (
        f"pipelines/orders.yml:2 max_parallel_tasks: found {HUGE}; expected a number of tasks "
        "at once" in done.stderr
    )
