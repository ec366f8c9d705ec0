"""The secrets services, each started once per test run, and projects whose PostgreSQL
warehouse password comes from one of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from etl_craft.config import providers
from tests.fixtures.secret_servers import (
    AWS_CREDENTIALS,
    REGION,
    VAULT_PATH,
    VAULT_TOKEN,
    SecretsManager,
    Vault,
    vault_server,
)
from tests.integration.warehouse.conftest import pg_warehouse_url

__all__ = ["pg_warehouse_url"]  # the warehouse tests' fixture: one PostgreSQL database

PROVIDERS = ("aws", "vault")
PREFIX = "etl-craft/test/"  # the Secrets Manager names: prefix + variable


@pytest.fixture(scope="session")
def secrets_manager(moto_url: str) -> SecretsManager:
    return SecretsManager(moto_url)


@pytest.fixture(scope="session")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    with vault_server(tmp_path_factory.mktemp("bao")) as server:
        yield server


@pytest.fixture
def provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a host running etl-craft holds: the provider's own credentials, nothing else."""
    for name, value in AWS_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("VAULT_TOKEN", VAULT_TOKEN)


class Rotating:
    """One provider holding WAREHOUSE_PW, and the craft-connector.yml that names it."""

    def __init__(self, kind: str, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        self._server = request.getfixturevalue("secrets_manager" if kind == "aws" else "vault")

    def put(self, value: str) -> None:
        if isinstance(self._server, SecretsManager):
            self._server.put(PREFIX + "WAREHOUSE_PW", value)
        else:
            self._server.put({"WAREHOUSE_PW": value})

    def secrets_section(self, cache_seconds: int) -> str:
        if isinstance(self._server, SecretsManager):
            where = f"  url: {self._server.url}\n  region: {REGION}\n  prefix: {PREFIX}\n"
        else:
            where = f"  url: {self._server.url}\n  path: {VAULT_PATH}\n"
        return (
            f"Secrets:\n  provider: {_KINDS[self.kind]}\n  cache_seconds: {cache_seconds}\n{where}"
        )

    def write_connector(self, root: Path, warehouse_url: str, cache_seconds: int) -> Path:
        url = make_url(warehouse_url)
        warehouse = (
            f"Warehouse:\n  type: postgresql\n  url: postgresql://{url.username}:"
            f"${{WAREHOUSE_PW}}@{url.host}:{url.port}/{url.database}\n"
        )
        root.mkdir(parents=True, exist_ok=True)
        path = root / "craft-connector.yml"
        text = "Engine:\n  path: engine.db\n" + warehouse + self.secrets_section(cache_seconds)
        path.write_text(text)
        return path


_KINDS = {"aws": "aws-secrets-manager", "vault": "vault"}


@pytest.fixture(params=PROVIDERS)
def rotating(
    request: pytest.FixtureRequest, provider_environment: None, monkeypatch: pytest.MonkeyPatch
) -> Rotating:
    # Each test starts as a new process would: no answer cached by an earlier test.
    monkeypatch.setattr(providers, "_shared", {})
    return Rotating(str(request.param), request)
