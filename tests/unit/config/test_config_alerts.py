"""The Alerts and Secrets sections: what each refuses, with the line and the remedy, and what
a channel's variables resolve to."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.config.alerts import ChannelKind
from etl_craft.config.connector import Connector, load_connector
from etl_craft.core.errors import ConfigurationError

BASE = "Engine:\n  path: engine.db\nWarehouse:\n  type: duckdb\n  path: warehouse.duckdb\n"
CHANNELS = """\
Alerts:
  channels:
    - name: ops
      kind: webhook
      url_variable: OPS_HOOK
      secret_variable: OPS_KEY
    - {name: chat, kind: slack, url_variable: SLACK_HOOK, pipelines: [orders], events: [RUN_FAILED]}
"""
ENVIRON = {"OPS_HOOK": "https://hooks.example.com/etl", "OPS_KEY": "k3y-ops-hmac"}


def load(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> Connector:
    root = tmp_path / "etl-craft"
    root.mkdir(exist_ok=True)
    (root / "craft-connector.yml").write_text(BASE + text)
    return load_connector(root / "craft-connector.yml", profile=None, environ=environ or {})


def refusal(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigurationError) as raised:
        load(tmp_path, text)
    return str(raised.value)


def test_channels_resolve_their_variables_and_join_the_secrets(tmp_path: Path) -> None:
    connector = load(tmp_path, CHANNELS, {**ENVIRON, "SLACK_HOOK": "https://hooks.slack.com/x1"})
    ops, chat = connector.alerts.channels
    assert (ops.name, ops.kind, ops.url, ops.secret) == (
        "ops",
        ChannelKind.WEBHOOK,
        "https://hooks.example.com/etl",
        "k3y-ops-hmac",
    )
    assert chat.wants("RUN_FAILED", "orders")
    assert not chat.wants("RUN_FAILED", "invoices")
    assert not chat.wants("ATTEMPT_LOST", "orders")
    assert {"k3y-ops-hmac", "https://hooks.slack.com/x1"} <= connector.secrets


def test_a_channel_whose_variable_is_unset_is_a_missing_secret(tmp_path: Path) -> None:
    connector = load(tmp_path, CHANNELS, ENVIRON)
    [ops] = connector.alerts.channels
    assert ops.name == "ops"
    with pytest.raises(ConfigurationError) as raised:
        connector.require_secrets("etl-craft server")
    assert "Alerts channel chat: url_variable names SLACK_HOOK, which is not set" in str(
        raised.value
    )


@pytest.mark.parametrize(
    ("channel", "expected"),
    [
        (
            "{name: ops, kind: pager, url_variable: A}",
            "has kind 'pager'; expected webhook, slack, email",
        ),
        ("{name: ops, kind: email}", "has to None; expected a list of e-mail addresses"),
        (
            "{name: ops, kind: email, to: [not-an-address]}",
            "has to ['not-an-address']; expected a list of e-mail addresses",
        ),
        (
            "{name: ops, kind: slack, url_variable: A, to: [a@example.com]}",
            "which only an email channel takes",
        ),
        (
            "{name: ops, kind: webhook, url_variable: A}",
            "has secret_variable None; expected a variable",
        ),
        ("{name: ops, kind: slack, url_variable: 'https://x'}", "has url_variable 'https://x'"),
        (
            "{name: ops, kind: slack, url_variable: A, events: [RUN_LATE]}",
            "expected a list of RUN_FAILED",
        ),
        (
            "{name: ops, kind: slack, url_variable: A, colour: red}",
            "has colour; expected keys among",
        ),
    ],
)
def test_a_malformed_channel_is_refused_at_its_line(
    tmp_path: Path, channel: str, expected: str
) -> None:
    message = refusal(tmp_path, f"Alerts:\n  channels:\n    - {channel}\n")
    assert "craft-connector.yml:7: Alerts.channels is " in message
    assert expected in message


def test_a_vault_provider_without_its_secret_path_is_refused(tmp_path: Path) -> None:
    message = refusal(tmp_path, "Secrets:\n  provider: vault\n  url: https://vault.example.com\n")
    assert "Secrets.path is missing; expected the KV version 2 secret" in message


def test_a_vault_provider_without_its_token_names_the_variable(tmp_path: Path) -> None:
    text = "Secrets:\n  provider: vault\n  url: https://vault.example.com\n  path: etl/prod\n"
    message = refusal(tmp_path, text)
    assert (
        "Secrets.token_variable names VAULT_TOKEN, which is not set in the environment" in message
    )
