"""The UI's settings: the environment, the command's options over it, and the signing secret."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import ConfigurationError
from etl_craft_ui.settings import MIN_SECRET_LENGTH, load_ui_settings


def test_options_override_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETL_CRAFT_UI_PORT", "9000")
    monkeypatch.setenv("ETL_CRAFT_UI_HOST", "0.0.0.0")
    settings = load_ui_settings(port=9100, host=None, secure_cookies=None)
    assert (settings.host, settings.port, settings.secure_cookies) == ("0.0.0.0", 9100, False)


def test_without_a_secret_each_load_draws_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETL_CRAFT_UI_SECRET", "")
    first, second = load_ui_settings(), load_ui_settings()
    assert len(first.secret) >= MIN_SECRET_LENGTH
    assert first.secret != second.secret


def test_a_given_secret_is_kept_and_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "s" * MIN_SECRET_LENGTH
    monkeypatch.setenv("ETL_CRAFT_UI_SECRET", secret)
    settings = load_ui_settings()
    assert settings.secret == secret
    assert secret not in repr(settings)


def test_a_short_secret_is_refused_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETL_CRAFT_UI_SECRET", "too-short-a-secret")
    with pytest.raises(ConfigurationError) as refused:
        load_ui_settings()
    assert "ETL_CRAFT_UI_SECRET" in str(refused.value)
    assert "too-short-a-secret" not in str(refused.value)
