"""Docs_site: its defaults, each key's parser, its secret, and refusals naming line and remedy."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.config.sections import DocsSite
from etl_craft.core.errors import ConfigurationError

BASE = "Engine:\n  path: engine.db\nWarehouse:\n  type: duckdb\n  path: warehouse.duckdb\n"


def _load(tmp_path: Path, extra: str = "", environ: dict[str, str] | None = None) -> DocsSite:
    path = tmp_path / "craft-connector.yml"
    path.write_text(BASE + extra)
    return load_connector(path, profile=None, environ=environ or {}).docs_site


def _refusal(tmp_path: Path, extra: str) -> str:
    with pytest.raises(ConfigurationError) as raised:
        _load(tmp_path, extra)
    return str(raised.value)


def test_without_the_section_the_catalog_is_served_on_loopback_daily(tmp_path: Path) -> None:
    site = _load(tmp_path)

    assert (site.schedule, site.output, site.host, site.port) == (
        "@daily",
        tmp_path / "catalog",
        "127.0.0.1",
        8732,
    )
    assert (site.base_url, site.trusted_proxies, site.allowed_ips) == (None, (), ())


def test_every_key_is_read_and_normalised(tmp_path: Path) -> None:
    site = _load(
        tmp_path,
        "Docs_site:\n"
        "  schedule: '@annually'\n"
        "  output: site/catalog\n"
        "  host: 0.0.0.0\n"
        "  port: 9000\n"
        "  base_url: https://Data.Example.com/catalog\n"
        "  trusted_proxies: [10.0.0.1, 10.1.0.0/16]\n"
        "  allowed_ips:\n    - 192.0.2.0/24\n    - 2001:db8::/32\n"
        "  ngrok_authtoken_variable: NGROK_AUTHTOKEN\n"
        "  ngrok_domain: Catalog.Example.com\n",
        {"NGROK_AUTHTOKEN": "tok-123"},
    )

    assert site.schedule == "@annually"
    assert (site.output, site.host, site.port) == (tmp_path / "site" / "catalog", "0.0.0.0", 9000)
    assert site.base_url == "https://data.example.com/catalog/"
    assert site.trusted_proxies == ("10.0.0.1/32", "10.1.0.0/16")
    assert site.allowed_ips == ("192.0.2.0/24", "2001:db8::/32")
    assert (site.ngrok_domain, site.ngrok_authtoken) == ("catalog.example.com", "tok-123")
    assert "tok-123" not in repr(site)


def test_an_unset_authtoken_variable_is_kept_for_ngrok_alone(tmp_path: Path) -> None:
    path = tmp_path / "craft-connector.yml"
    path.write_text(BASE + "Docs_site:\n  ngrok_authtoken_variable: NGROK_AUTHTOKEN\n")
    connector = load_connector(path, profile=None, environ={})

    assert connector.docs_site.ngrok_authtoken is None
    assert "NGROK_AUTHTOKEN" in str(connector.docs_site.ngrok_authtoken_problem)
    # The overseer and workers, which call require_secrets, never need it.
    assert connector.missing_secrets == ()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("schedule: '61 * * * *'", "Docs_site.schedule is '61 * * * *'; expected a cron"),
        ("schedule: '0 0 31 2 *'", "never fires"),
        ("base_url: ftp://example.com/", "expected the catalog's external URL"),
        ("base_url: https://example.com/a?b=1", "without query, fragment or credentials"),
        ("base_url: https://example.com/.hidden/", "segments do not start with '.'"),
        ("trusted_proxies: [10.0.0.300]", "'10.0.0.300' is not an address or range"),
        ("allowed_ips: 10.0.0.0/8", "expected a list of IP addresses or CIDR ranges"),
        ("port: 70000", "expected a TCP port: a whole number from 1 to 65535"),
        ("ngrok_authtoken_variable: 'abc def'", "never the secret itself"),
        ("output: ../outside", "Docs_site.output is '../outside'"),
        ("ngrok: {domain: x.example.com}", "Docs_site.ngrok is not a known key"),
    ],
)
def test_a_bad_value_names_its_line_key_and_expectation(
    tmp_path: Path, line: str, expected: str
) -> None:
    message = _refusal(tmp_path, f"Docs_site:\n  {line}\n")

    assert f"{tmp_path / 'craft-connector.yml'}:7: Docs_site." in message
    assert expected in message
