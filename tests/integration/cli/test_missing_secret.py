"""An unset secret fails only the commands that need it: read-only ones warn and go on."""

from __future__ import annotations

import pytest

from etl_craft.core.errors import ExitCode
from tests.integration.cli.conftest import CONNECTOR, PIPELINE_MIGRATION, Site

EMAIL = """\
Email:
  host: smtp.example.com
  from_address: etl@example.com
  username: etl
  password_variable: SMTP_PASSWORD
"""


@pytest.fixture
def without_password(sqlite_site: Site) -> Site:
    site = sqlite_site
    assert site.run("init-db").returncode == 0
    site.write_migration("0001_orders.sql", PIPELINE_MIGRATION)
    assert site.run("migrate").returncode == 0
    (site.project / "craft-connector.yml").write_text(CONNECTOR + EMAIL)
    return site


@pytest.mark.parametrize(
    "command",
    [("list",), ("history", "--pipeline_code", "orders"), ("status", "--pipeline_code", "orders")],
)
def test_read_only_commands_warn_naming_the_variable_and_go_on(
    without_password: Site, command: tuple[str, ...]
) -> None:
    done = without_password.run(*command)
    # status gets as far as reading the Engine DB, which holds no run of the pipeline yet
    expected = ExitCode.NOT_FOUND if command[0] == "status" else 0
    assert done.returncode == expected, done.stderr
    assert "Email.password_variable names SMTP_PASSWORD, which is not set" in done.stderr
    assert "WARNING" in done.stderr


def test_the_server_refuses_to_start_naming_the_variable(without_password: Site) -> None:
    done = without_password.run("server")
    assert done.returncode == ExitCode.CONFIGURATION, done.stderr
    assert "etl-craft server needs every secret its configuration names" in done.stderr
    assert "Email.password_variable names SMTP_PASSWORD" in done.stderr


def test_doctor_warns(without_password: Site) -> None:
    _, document = without_password.json("doctor")
    (config,) = [check for check in document["checks"] if check["name"] == "config"]
    assert config["status"] == "WARN"
    assert "Email.password_variable names SMTP_PASSWORD" in config["detail"]
