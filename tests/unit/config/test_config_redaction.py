"""Redaction.sensitive_patterns: the defaults, a list of glob patterns, and a clear refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.core.errors import ConfigurationError
from etl_craft.core.redaction import SENSITIVE_PATTERNS

BASE = "Engine:\n  path: engine.db\nWarehouse:\n  type: duckdb\n  path: warehouse.duckdb\n"


def _load(tmp_path: Path, extra: str = "") -> tuple[str, ...]:
    path = tmp_path / "craft-connector.yml"
    path.write_text(BASE + extra)
    return load_connector(path, profile=None, environ={}).redaction.sensitive_patterns


def test_without_the_section_the_four_default_patterns_apply(tmp_path: Path) -> None:
    assert _load(tmp_path) == SENSITIVE_PATTERNS


def test_patterns_are_read_as_a_list_and_matched_without_case(tmp_path: Path) -> None:
    found = _load(tmp_path, "Redaction:\n  sensitive_patterns:\n    - '*_pw'\n    - '*TOKEN*'\n")
    assert found == ("*_PW", "*TOKEN*")


@pytest.mark.parametrize("value", ["'*TOKEN*'", "[]", "['a b']", "[1]"])
def test_a_bad_value_names_file_line_key_value_and_expectation(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        _load(tmp_path, f"Redaction:\n  sensitive_patterns: {value}\n")
    message = str(raised.value)
    assert f"{tmp_path / 'craft-connector.yml'}:7: Redaction.sensitive_patterns is " in message
    assert "expected a list of glob patterns over parameter names" in message


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://etl@db/etl?password=hunter2",
        "postgresql+psycopg://etl@db/etl?sslmode=require&Passwd=hunter2",
    ],
)
def test_an_engine_or_warehouse_url_with_a_credential_in_its_query_is_refused(
    tmp_path: Path, url: str
) -> None:
    path = tmp_path / "craft-connector.yml"
    path.write_text(f"Engine:\n  url: {url}\nWarehouse:\n  type: postgresql\n  url: {url}\n")
    with pytest.raises(ConfigurationError) as raised:
        load_connector(path, profile=None, environ={})
    message = str(raised.value)
    assert "Engine.url carries a credential in its query" in message
    assert "Warehouse.url carries a credential in its query" in message
    assert "${VARIABLE}" in message
    assert "hunter2" not in message
