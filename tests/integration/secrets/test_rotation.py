"""A warehouse password kept in a secrets provider, rotated there, is used once the copy
etl-craft cached is older than Secrets.cache_seconds, and is a secret the logs mask."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from etl_craft.config import providers
from etl_craft.config.connector import load_connector
from etl_craft.core.errors import ConfigurationError
from etl_craft.core.redaction import Redactor
from etl_craft.runtime import child
from etl_craft.warehouse import connect
from etl_craft.warehouse.postgresql import PostgreSQLConnection
from tests.integration.secrets.conftest import Rotating

CACHE_SECONDS = 60


def _password_used(config: Path) -> str:
    """The password the warehouse connection opened with, as the server was sent it."""
    connector = load_connector(config, profile=None)
    with connect(connector.warehouse) as conn:
        assert isinstance(conn, PostgreSQLConnection)
        assert conn.fetch_value("probe", "SELECT 1") == 1
        return str(conn._conn.info.password)


def test_a_rotated_password_is_used_once_the_cached_one_expires(
    rotating: Rotating, pg_warehouse_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = f"First-{rotating.kind}-pw-4417", f"Second-{rotating.kind}-pw-9023"
    rotating.put(first)
    config = rotating.write_connector(tmp_path / "etl-craft", pg_warehouse_url, CACHE_SECONDS)
    assert _password_used(config) == first
    kept = load_connector(config, profile=None)

    rotating.put(second)
    assert _password_used(config) == first  # the provider is not asked again before the time
    assert not kept.secrets_expired()

    later = time.monotonic() + CACHE_SECONDS
    monkeypatch.setattr(providers, "clock", lambda: later)
    assert kept.secrets_expired()
    assert _password_used(config) == second
    rotated = load_connector(config, profile=None)
    assert second in rotated.secrets
    assert Redactor(rotated.secrets)(f"connected with {second}") == "connected with ***"


def test_a_variable_the_provider_lacks_names_the_provider(
    rotating: Rotating, pg_warehouse_url: str, tmp_path: Path
) -> None:
    config = rotating.write_connector(tmp_path / "etl-craft", pg_warehouse_url, 0)
    config.write_text(config.read_text().replace("${WAREHOUSE_PW}", "${WAREHOUSE_PASSWORD_NEW}"))
    with pytest.raises(ConfigurationError) as raised:
        load_connector(config, profile=None)
    message = str(raised.value)
    assert "Warehouse.url refers to ${WAREHOUSE_PASSWORD_NEW}, which is not set in " in message
    assert ("AWS Secrets Manager at " if rotating.kind == "aws" else "Vault at ") in message
    assert "set WAREHOUSE_PASSWORD_NEW in it" in message


def test_the_fork_server_reads_the_configuration_again_once_a_secret_expires(
    rotating: Rotating, pg_warehouse_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = f"Forked-{rotating.kind}-pw-1187", f"Rotated-{rotating.kind}-pw-6650"
    monkeypatch.setattr(child, "_configured", {})
    monkeypatch.setattr(child, "_engines", {})
    rotating.put(first)
    config = rotating.write_connector(tmp_path / "etl-craft", pg_warehouse_url, CACHE_SECONDS)
    argv = ["--attempt-id", "1", "--owner-id", "owner", "--config", "craft-connector.yml"]
    environ, cwd = dict(os.environ), str(config.parent)

    def prepared_password() -> str | None:
        child.prepare(argv, environ, cwd)
        [configured] = [found for found in child._configured.values() if found is not None]
        assert configured.connector is not None
        return make_url(str(configured.connector.warehouse.url)).password

    assert prepared_password() == first
    rotating.put(second)
    assert prepared_password() == first  # the next task processes keep it within the time
    later = time.monotonic() + CACHE_SECONDS
    monkeypatch.setattr(providers, "clock", lambda: later)
    assert prepared_password() == second


def test_a_forked_process_reads_over_connections_of_its_own(
    rotating: Rotating, pg_warehouse_url: str, tmp_path: Path
) -> None:
    """Task processes are forked from a fork server that has read secrets too: a child talking
    over its parent's pooled connection while the parent does would read the parent's answer
    (or the parent the child's) and wait out the client's read timeout. Parent and children
    read at the same time, round after round; none may fail."""
    rotating.put("Forked-pw-5120")
    config = rotating.write_connector(tmp_path / "etl-craft", pg_warehouse_url, 0)
    connector = load_connector(config, profile=None)  # the parent's pooled connection opens
    provider = next(iter(providers._shared.values()))
    failed = []
    for round_number in range(60):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's outcome is its exit status
            code = 0
            try:
                for _ in range(20):
                    provider.get("WAREHOUSE_PW")
            except BaseException:
                code = 1
            os._exit(code)
        try:
            for _ in range(20):
                provider.get("WAREHOUSE_PW")
        except Exception as error:
            failed.append(f"round {round_number}, the parent: {error!r}")
        _, status = os.waitpid(pid, 0)
        if status != 0:
            failed.append(f"round {round_number}, the child")
    assert failed == []
    assert "Forked-pw-5120" in connector.secrets
