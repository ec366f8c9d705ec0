"""ETL_CRAFT_* settings, and which Engine DB a command or service uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.config.connector import Connector, load_connector
from etl_craft.config.environment import read_environment
from etl_craft.config.settings import (
    SETTING_NAMES,
    ServiceSettings,
    load_settings,
    resolve_engine_url,
)
from etl_craft.core.errors import ConfigurationError

SETTING_VARIABLES = (
    "ETL_CRAFT_ENGINE_URL",
    "ETL_CRAFT_PROFILE",
    "ETL_CRAFT_POLL_SECONDS",
    "ETL_CRAFT_LEASE_SECONDS",
    "ETL_CRAFT_HEARTBEAT_SECONDS",
    "ETL_CRAFT_LOG_LEVEL",
    "ETL_CRAFT_LOG_FORMAT",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in SETTING_VARIABLES + tuple(f"ETL_CRAFT_{n.upper()}" for n in SETTING_NAMES):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def connector(tmp_path: Path) -> Connector:
    path = tmp_path / "craft-connector.yml"
    path.write_text("Engine:\n  path: engine.db\nWarehouse:\n  type: duckdb\n  path: w.duckdb\n")
    return load_connector(path, profile=None, environ={})


def test_defaults_without_variables() -> None:
    settings = load_settings()
    assert settings == ServiceSettings(
        engine_url=None,
        profile=None,
        poll_seconds=1.0,
        lease_seconds=60,
        heartbeat_seconds=15,
        log_level="INFO",
        log_format="text",
    )


def test_the_environment_reader_has_the_defaults_a_command_without_variables_uses() -> None:
    """Without a variable no reader runs; what it would read must be those same defaults."""
    assert read_environment() == load_settings() == ServiceSettings()
    assert read_environment().given == frozenset()


def test_a_variable_in_lower_case_is_read_as_pydantic_settings_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("etl_craft_lease_seconds", "90")
    settings = load_settings()
    assert (settings.lease_seconds, settings.given) == (90, frozenset({"lease_seconds"}))


def test_a_variable_that_names_no_setting_leaves_the_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ETL_CRAFT_NOT_A_SETTING", "x")
    assert load_settings() == ServiceSettings()


def test_variables_are_read_with_the_etl_craft_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETL_CRAFT_PROFILE", "prod")
    monkeypatch.setenv("ETL_CRAFT_POLL_SECONDS", "0.25")
    monkeypatch.setenv("ETL_CRAFT_LOG_FORMAT", "json")
    settings = load_settings()
    assert (settings.profile, settings.poll_seconds, settings.log_format) == ("prod", 0.25, "json")


def test_the_engine_url_variable_overrides_the_project(
    monkeypatch: pytest.MonkeyPatch, connector: Connector
) -> None:
    monkeypatch.setenv("ETL_CRAFT_ENGINE_URL", "postgresql+psycopg://etl@db/etl")
    assert resolve_engine_url(load_settings(), connector) == "postgresql+psycopg://etl@db/etl"


def test_the_project_engine_is_used_when_the_variable_is_unset(connector: Connector) -> None:
    url = resolve_engine_url(load_settings(), connector)
    assert url == f"sqlite:///{connector.path.parent / 'engine.db'}"


def test_the_engine_url_variable_alone_needs_no_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETL_CRAFT_ENGINE_URL", "sqlite:////srv/engine.db")
    assert resolve_engine_url(load_settings(), None) == "sqlite:////srv/engine.db"


def test_no_project_and_no_variable_is_refused_with_both_remedies() -> None:
    with pytest.raises(ConfigurationError) as caught:
        resolve_engine_url(load_settings(), None)
    message = str(caught.value)
    assert "run inside a project (create one with etl-craft new PATH)" in message
    assert "or set ETL_CRAFT_ENGINE_URL" in message


def test_a_bad_variable_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETL_CRAFT_POLL_SECONDS", "soon")
    monkeypatch.setenv("ETL_CRAFT_LOG_LEVEL", "LOUD")
    with pytest.raises(ConfigurationError) as caught:
        load_settings()
    message = str(caught.value)
    assert "have 2 problem(s)" in message
    assert "ETL_CRAFT_POLL_SECONDS='soon'" in message
    assert "ETL_CRAFT_LOG_LEVEL='LOUD'" in message


def test_a_bad_engine_url_is_refused_without_showing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETL_CRAFT_ENGINE_URL", "hunter2 is not a url")
    with pytest.raises(ConfigurationError) as caught:
        load_settings()
    message = str(caught.value)
    assert "ETL_CRAFT_ENGINE_URL=(hidden): expected an SQLAlchemy URL" in message
    assert "hunter2" not in message


def test_a_heartbeat_slower_than_the_lease_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETL_CRAFT_HEARTBEAT_SECONDS", "30")
    monkeypatch.setenv("ETL_CRAFT_LEASE_SECONDS", "30")
    with pytest.raises(ConfigurationError) as caught:
        load_settings()
    assert "ETL_CRAFT_HEARTBEAT_SECONDS=30 is not below ETL_CRAFT_LEASE_SECONDS=30" in str(
        caught.value
    )


@pytest.mark.parametrize("key", ["password", "PWD", "access_token", "private_key_file_pwd"])
def test_an_engine_url_with_a_credential_in_its_query_is_refused(
    monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("ETL_CRAFT_ENGINE_URL", f"postgresql+psycopg://etl@db/etl?{key}=hunter2")
    with pytest.raises(ConfigurationError) as caught:
        load_settings()
    message = str(caught.value)
    assert f"ETL_CRAFT_ENGINE_URL=(hidden): carries a credential in its query (?{key}=***)" in (
        message
    )
    assert "put the secret in a variable" in message
    assert "hunter2" not in message


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("POLL_SECONDS", "inf"),
        ("LEASE_SECONDS", "99999999999999999999"),
        ("HEARTBEAT_SECONDS", "604801"),
        ("ENGINE_CONNECT_TIMEOUT_SECONDS", "86401"),
        ("ENGINE_STATEMENT_TIMEOUT_SECONDS", "1e30"),
    ],
)
def test_a_number_outside_its_range_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(f"ETL_CRAFT_{variable}", value)
    with pytest.raises(ConfigurationError) as refused:
        load_settings()
    assert f"ETL_CRAFT_{variable}='{value}'" in str(refused.value)
