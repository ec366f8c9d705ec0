"""The owner settings: what an owner of runs and attempts works with, from the configuration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from etl_craft.config.connector import Connector, load_connector
from etl_craft.config.owner import OwnerSettings, owner_settings
from etl_craft.config.rules import GatePolicy
from etl_craft.config.settings import ENV_PREFIX, load_settings
from etl_craft.core.errors import ConfigurationError

PROJECT = """\
Engine:
  path: engine.db
Warehouse:
  type: duckdb
  path: w.duckdb
  max_queries: 3
Orchestration:
  max_parallel_tasks: 7
  retries: 2
  shutdown_grace_seconds: 45
  lease_seconds: 40
  gate_wait_minutes: 5
  dependency_gates: warn
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in [name for name in os.environ if name.startswith(ENV_PREFIX)]:
        monkeypatch.delenv(variable)


@pytest.fixture
def connector(tmp_path: Path) -> Connector:
    path = tmp_path / "craft-connector.yml"
    path.write_text(PROJECT)
    return load_connector(path, profile=None, environ={})


def built(connector: Connector | None, timing: tuple[float, float] | None = None) -> OwnerSettings:
    return owner_settings(
        load_settings(),
        connector,
        owner_id="host:1:2:ab",
        engine_url="sqlite:////srv/engine.db",
        logs_dir=Path("/srv/logs"),
        timing=timing,
    )


def test_the_project_s_orchestration_and_the_variables_make_the_owner_settings(
    connector: Connector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ETL_CRAFT_LOG_LEVEL", "DEBUG")
    monkeypatch.setenv("ETL_CRAFT_POLL_SECONDS", "0.5")

    assert built(connector) == OwnerSettings(
        owner_id="host:1:2:ab",
        engine_url="sqlite:////srv/engine.db",
        config_path=connector.path,
        profile=None,
        logs_dir=Path("/srv/logs"),
        log_level="DEBUG",
        default_retries=2,
        default_parallel_tasks=7,
        gate_wait_minutes=5.0,
        max_warehouse_queries=3,
        dependency_gates=GatePolicy.WARN,
        lease_seconds=40.0,
        heartbeat_seconds=10.0,  # a quarter of the project's lease, below the 15s default
        poll_seconds=0.5,
        shutdown_grace_seconds=45.0,
    )


def test_without_a_project_the_owner_settings_are_the_defaults() -> None:
    settings = built(None)

    assert (settings.config_path, settings.default_parallel_tasks) == (None, 4)
    assert (settings.lease_seconds, settings.heartbeat_seconds) == (60.0, 15.0)
    assert (settings.gate_wait_minutes, settings.shutdown_grace_seconds) == (60.0, 60.0)


def test_the_lease_variable_wins_over_the_project_s_lease(
    connector: Connector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ETL_CRAFT_LEASE_SECONDS", "200")

    settings = built(connector)

    assert (settings.lease_seconds, settings.heartbeat_seconds) == (200.0, 15.0)


def test_a_heartbeat_not_below_the_project_s_lease_is_refused_naming_both(
    connector: Connector, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ETL_CRAFT_HEARTBEAT_SECONDS", "50")

    with pytest.raises(ConfigurationError) as refused:
        built(connector)

    assert "heartbeat of 50s is not below the lease of 40s" in str(refused.value)
    assert "Orchestration lease_seconds" in str(refused.value)


def test_a_given_timing_replaces_the_project_s_lease(
    connector: Connector, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker's: its lease is ETL_CRAFT_LEASE_SECONDS and its heartbeat its own option.
    monkeypatch.setenv("ETL_CRAFT_HEARTBEAT_SECONDS", "50")

    settings = built(connector, timing=(60.0, 20.0))

    assert (settings.lease_seconds, settings.heartbeat_seconds) == (60.0, 20.0)
