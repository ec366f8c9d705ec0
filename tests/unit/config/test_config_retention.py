"""The Retention section: its defaults, its values, and a clear refusal out of range."""

from __future__ import annotations

from datetime import time
from pathlib import Path

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.config.sections import Retention
from etl_craft.core.errors import ConfigurationError

BASE = "Engine:\n  path: engine.db\nWarehouse:\n  type: duckdb\n  path: warehouse.duckdb\n"


def _load(tmp_path: Path, extra: str = "") -> Retention:
    path = tmp_path / "craft-connector.yml"
    path.write_text(BASE + extra)
    return load_connector(path, profile=None, environ={}).retention


def test_without_the_section_history_is_kept_as_the_defaults_say(tmp_path: Path) -> None:
    assert _load(tmp_path) == Retention(
        run_history_days=400,
        attempt_log_days=90,
        consumption_days=400,
        interventions_days=None,
        daily_at=time(3, 0),
        batch_rows=10_000,
    )


def test_the_section_sets_each_limit(tmp_path: Path) -> None:
    found = _load(
        tmp_path,
        "Retention:\n  run_history_days: 30\n  attempt_log_days: 7\n  consumption_days: 60\n"
        "  interventions_days: 365\n  daily_at: 02:15\n  batch_rows: 500\n",
    )
    assert found == Retention(30, 7, 60, 365, time(2, 15), 500)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("run_history_days: 0", "expected a number of days: a whole number from 1 to 36500"),
        ("attempt_log_days: 40000", "a number of days: a whole number from 1 to 36500"),
        ("interventions_days: forever", "expected never or a number of days: a whole number"),
        ('daily_at: "25:00"', "a time of day as HH:MM on a 24-hour clock"),
        ("daily_at: 3", "a time of day as HH:MM on a 24-hour clock"),
        ("batch_rows: 1000000", "a number of rows per transaction: a whole number from 1 to"),
    ],
)
def test_a_value_out_of_range_names_file_line_key_and_expectation(
    tmp_path: Path, line: str, expected: str
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        _load(tmp_path, f"Retention:\n  {line}\n")
    message = str(raised.value)
    key = line.split(":", maxsplit=1)[0]
    assert f"{tmp_path / 'craft-connector.yml'}:7: Retention.{key} is " in message
    assert expected in message
