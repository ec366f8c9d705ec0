"""The Auth section: single sign-on is off without it; its client secret comes from a variable;
a group mapped to no role, or an issuer without its client, is refused with the remedy."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.config.connector import load_connector
from etl_craft.config.sections import Auth
from etl_craft.core.errors import ConfigurationError

BASE = "Engine:\n  path: engine.db\nWarehouse:\n  type: duckdb\n  path: warehouse.duckdb\n"
SSO = (
    "Auth:\n  oidc_issuer: https://login.example.com/realms/data\n"
    "  oidc_client_id: etl-craft-ui\n  oidc_client_secret_variable: OIDC_SECRET\n"
)


def _load(tmp_path: Path, extra: str = "", environ: dict[str, str] | None = None) -> Auth:
    path = tmp_path / "craft-connector.yml"
    path.write_text(BASE + extra)
    return load_connector(path, profile=None, environ=environ or {}).auth


def test_without_the_section_there_is_no_single_sign_on(tmp_path: Path) -> None:
    found = _load(tmp_path)
    assert not found.oidc
    assert (found.oidc_default_role, found.oidc_group_roles) == ("viewer", {})


def test_the_section_sets_the_provider_and_the_roles_of_groups(tmp_path: Path) -> None:
    extra = SSO + "  oidc_default_role: operator\n  oidc_group_roles:\n    etl-admins: admin\n"
    found = _load(tmp_path, extra, {"OIDC_SECRET": "s3cret-from-env"})

    assert found.oidc
    assert found.oidc_issuer == "https://login.example.com/realms/data"
    assert found.oidc_client_secret == "s3cret-from-env"
    assert "s3cret" not in repr(found)
    assert (found.oidc_default_role, found.oidc_group_roles) == (
        "operator",
        {"etl-admins": "admin"},
    )


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (SSO + "  oidc_group_roles:\n    etl-admins: root\n", "expected a mapping of group"),
        (
            SSO + "  oidc_default_role: owner\n",
            "expected one of viewer, operator, developer, admin",
        ),
        ("Auth:\n  oidc_issuer: https://login.example.com\n", "oidc_client_id is missing"),
        (SSO + "  oidc_client_secret: written-out\n", "oidc_client_secret"),
    ],
)
def test_a_bad_section_is_refused_with_its_expectation(
    tmp_path: Path, extra: str, expected: str
) -> None:
    with pytest.raises(ConfigurationError, match=expected):
        _load(tmp_path, extra, {"OIDC_SECRET": "x"})
