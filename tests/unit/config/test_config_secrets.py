"""Secrets are variable names: .env and environment resolution, refusals, and the fingerprint."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from etl_craft.config.connector import Connector, load_connector
from etl_craft.core.errors import ConfigurationError

CONFIG = """\
Engine:
  url: postgresql+psycopg://etl:${ENGINE_PASSWORD}@${ENGINE_HOST}/etl
Warehouse:
  type: postgresql
  url: ${WAREHOUSE_URL}
Email:
  host: smtp.example.com
  from_address: etl@example.com
  password_variable: SMTP_PASSWORD
"""

ENV_FILE = """\
# secrets for the demo
export ENGINE_PASSWORD="engine-from-file"
ENGINE_HOST=db.example.com
WAREHOUSE_URL='postgresql://wh:wh-password@wh.example.com/dw'

SMTP_PASSWORD=smtp-from-file
"""


def write_project(tmp_path: Path, config: str = CONFIG, env_file: str | None = ENV_FILE) -> Path:
    root = tmp_path / "etl-craft"
    root.mkdir(parents=True, exist_ok=True)
    (root / "craft-connector.yml").write_text(config)
    if env_file is not None:
        (root / ".env").write_text(env_file)
    return root / "craft-connector.yml"


def load(path: Path, **environ: str) -> Connector:
    return load_connector(path, profile=None, environ=environ)


def refusal(path: Path, **environ: str) -> str:
    with pytest.raises(ConfigurationError) as caught:
        load(path, **environ)
    return str(caught.value)


def test_secrets_come_from_the_env_file_beside_the_config(tmp_path: Path) -> None:
    connector = load(write_project(tmp_path))
    assert connector.engine_url == "postgresql+psycopg://etl:engine-from-file@db.example.com/etl"
    assert connector.warehouse.url == "postgresql://wh:wh-password@wh.example.com/dw"
    assert connector.email is not None
    assert connector.email.password == "smtp-from-file"
    assert connector.email.password_variable == "SMTP_PASSWORD"


def test_the_environment_wins_over_the_env_file(tmp_path: Path) -> None:
    connector = load(write_project(tmp_path), ENGINE_PASSWORD="engine-from-env")
    assert connector.engine_url == "postgresql+psycopg://etl:engine-from-env@db.example.com/etl"


def test_every_resolved_value_is_listed_for_redaction(tmp_path: Path) -> None:
    connector = load(write_project(tmp_path))
    assert {
        "engine-from-file",
        "db.example.com",
        "postgresql://wh:wh-password@wh.example.com/dw",
        "wh-password",
        "smtp-from-file",
    } <= connector.secrets


def test_repr_shows_no_secret(tmp_path: Path) -> None:
    connector = load(write_project(tmp_path))
    shown = repr(connector)
    assert "Warehouse(" in shown
    for secret in ("engine-from-file", "wh-password", "smtp-from-file"):
        assert secret not in shown


def unsent_mail(connector: Connector) -> str:
    """What sending alert mail is refused with; the connector itself loaded."""
    assert connector.email is not None
    assert connector.email.password is None
    with pytest.raises(ConfigurationError) as caught:
        connector.email.require_password()
    (missing,) = connector.missing_secrets
    assert str(caught.value) == f"cannot send alert mail: {missing}"
    return missing


def test_an_unset_secret_fails_only_sending_naming_file_key_and_variable(tmp_path: Path) -> None:
    path = write_project(tmp_path, env_file="SMTP_PASSWRD=x\n")
    connector = load(path, ENGINE_PASSWORD="p", ENGINE_HOST="h", WAREHOUSE_URL="postgresql://h/d")
    message = unsent_mail(connector)
    env_file = path.parent / ".env"
    assert message.startswith(
        f"{path}:9: Email.password_variable names SMTP_PASSWORD, which is not set in the "
        f"environment nor in {env_file}; set SMTP_PASSWORD in one of them"
    )
    assert "(similar names that are set: SMTP_PASSWRD" in message


def test_an_unset_url_variable_is_refused(tmp_path: Path) -> None:
    path = write_project(tmp_path, env_file=None)
    message = refusal(path, ENGINE_HOST="h", WAREHOUSE_URL="postgresql://h/d", SMTP_PASSWORD="s")
    assert f"{path}:2: Engine.url refers to ${{ENGINE_PASSWORD}}, which is not set" in message


@pytest.mark.parametrize("where", ["environment", "env file"])
def test_an_empty_secret_fails_only_sending(tmp_path: Path, where: str) -> None:
    env_file = ENV_FILE.replace("SMTP_PASSWORD=smtp-from-file", "SMTP_PASSWORD='  '")
    path = write_project(tmp_path, env_file=ENV_FILE if where == "environment" else env_file)
    environ = {"SMTP_PASSWORD": ""} if where == "environment" else {}
    message = unsent_mail(load(path, **environ))
    source = "the environment" if where == "environment" else str(path.parent / ".env")
    assert (
        f"{path}:9: Email.password_variable names SMTP_PASSWORD, which is empty in {source}"
        in message
    )


def test_a_malformed_env_file_line_is_refused_without_showing_it(tmp_path: Path) -> None:
    path = write_project(tmp_path, env_file=ENV_FILE + "this-is-not-an-assignment s3cret\n")
    message = refusal(path)
    assert f"{path.parent / '.env'}:7: expected KEY=VALUE" in message
    assert "s3cret" not in message


def test_a_url_that_is_not_a_url_once_resolved_is_refused(tmp_path: Path) -> None:
    path = write_project(tmp_path)
    message = refusal(path, WAREHOUSE_URL="not a url")
    assert f"{path}:5: Warehouse.url is '${{WAREHOUSE_URL}}'; expected an SQLAlchemy URL" in message
    assert "not a url" not in message


def test_the_fingerprint_is_stable_and_ignores_secret_values(tmp_path: Path) -> None:
    path = write_project(tmp_path)
    first = load(path).fingerprint()
    assert len(first) == 64
    assert load(path).fingerprint() == first
    changed = load(path, ENGINE_PASSWORD="other", SMTP_PASSWORD="other", ENGINE_HOST="elsewhere")
    assert changed.fingerprint() == first


def test_the_fingerprint_ignores_where_the_project_lives_and_key_order(tmp_path: Path) -> None:
    path = write_project(tmp_path / "a")
    email_first = CONFIG.index("Email:")
    reordered = CONFIG[email_first:] + CONFIG[:email_first]
    other = write_project(tmp_path / "b", config=reordered)
    assert other.read_text() != path.read_text()
    assert load(other).fingerprint() == load(path).fingerprint()


def test_the_fingerprint_changes_with_a_setting(tmp_path: Path) -> None:
    path = write_project(tmp_path / "a")
    copy = tmp_path / "b"
    shutil.copytree(path.parent, copy)
    (copy / "craft-connector.yml").write_text(CONFIG + "Orchestration:\n  retries: 1\n")
    assert load(copy / "craft-connector.yml").fingerprint() != load(path).fingerprint()


def test_the_fingerprint_holds_variable_names_not_values(tmp_path: Path) -> None:
    connector = load(write_project(tmp_path))
    assert "SMTP_PASSWORD" in connector.normalised
    assert "${ENGINE_PASSWORD}" in connector.normalised
    for secret in connector.secrets:
        assert secret not in connector.normalised


def test_the_env_file_is_read_as_dotenv_reads_it(tmp_path: Path) -> None:
    env_file = (
        "ENGINE_PASSWORD=abc # the engine's password\n"
        'ENGINE_HOST="db\\texample"\n'
        "WAREHOUSE_URL='postgresql://wh:a\\nb@wh.example.com/dw'\n"
        'SMTP_PASSWORD="line1\\nline2"\n'
    )
    path = write_project(tmp_path, env_file=env_file)

    secrets = load(path).secrets

    assert "abc" in secrets
    assert "abc # the engine's password" not in secrets
    assert "line1\nline2" in secrets
    assert "postgresql://wh:a\\nb@wh.example.com/dw" in secrets


def test_a_key_without_a_value_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = write_project(tmp_path, env_file=ENV_FILE + "\n\nDANGLING\n")
    message = refusal(path)
    assert f"{path.parent / '.env'}:9: expected KEY=VALUE" in message
