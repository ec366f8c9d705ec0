"""Users, managed by an admin from the CLI and the API: the password comes from stdin (or a
prompt), never from the arguments, and is kept only as its scrypt hash; every change is an
action recorded under the admin's name, without the password."""

from __future__ import annotations

import io
import json
import sys

import pytest

from etl_craft.cli.main import run as run_cli
from etl_craft.core.passwords import verify_password
from tests.integration.api.conftest import Api, problem_of

PASSWORD = "piped in on stdin, never argv"


def cli(
    api: Api,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *args: str,
    stdin: str = "",
) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    capsys.readouterr()
    code = run_cli(["--config", str(api.project.config), *args])
    captured = capsys.readouterr()
    print(captured.err, file=sys.stderr, end="")  # left for the test to read
    return code, captured.out


def stored_hash(api: Api, name: str) -> str:
    [row] = api.rows("SELECT PASSWORD_HASH AS h FROM CFG_USERS WHERE USER_NAME = :n", n=name)
    return str(row["h"])


def test_users_are_added_listed_and_changed_from_the_cli(
    api: Api, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ("users", "add", "--name", "grace", "--role", "developer", "--email", "g@example.com")
    code, out = cli(api, capsys, monkeypatch, *args, stdin=f"{PASSWORD}\n")
    assert (code, out.strip()) == (0, "user grace added with role developer")
    assert verify_password(PASSWORD, stored_hash(api, "grace"))

    assert (
        cli(api, capsys, monkeypatch, "users", "set-role", "--name", "grace", "--role", "admin")[0]
        == 0
    )
    assert cli(api, capsys, monkeypatch, "users", "disable", "--name", "grace")[0] == 0
    code, listed = cli(api, capsys, monkeypatch, "--format", "json", "users", "list")
    assert code == 0
    document = json.loads(listed)
    assert document["schema"] == "etl-craft/users/1"
    grace = next(user for user in document["users"] if user["name"] == "grace")
    assert {
        "role": "admin",
        "disabled": True,
        "source": "password",
        "has_password": True,
    }.items() <= grace.items()
    assert grace["email"] == "g@example.com"
    assert "scrypt" not in listed

    new_password = "another long password"
    reset = ("users", "set-password", "--name", "grace")
    assert cli(api, capsys, monkeypatch, *reset, stdin=f"{new_password}\n")[0] == 0
    assert verify_password(new_password, stored_hash(api, "grace"))
    recorded = api.rows("SELECT ARGUMENTS AS a FROM AUD_ACTIONS WHERE COMMAND = 'users'")
    assert [json.loads(row["a"])["action"] for row in recorded][-4:] == [
        "add",
        "set-role",
        "disable",
        "set-password",
    ]
    assert PASSWORD not in json.dumps(recorded)
    assert new_password not in json.dumps(recorded)


def test_a_user_without_a_password_on_stdin_is_refused_with_the_remedy(
    api: Api, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _ = cli(api, capsys, monkeypatch, "users", "add", "--name", "nopass", "--role", "viewer")
    assert code != 0
    assert "no password for user nopass on stdin" in capsys.readouterr().err
    assert api.rows("SELECT 1 AS x FROM CFG_USERS WHERE USER_NAME = 'nopass'") == []

    args = ("users", "add", "--name", "sso.only", "--role", "viewer", "--no-password")
    assert cli(api, capsys, monkeypatch, *args)[0] == 0
    assert api.rows("SELECT PASSWORD_HASH AS h FROM CFG_USERS WHERE USER_NAME = 'sso.only'") == [
        {"h": None}
    ]


def test_the_api_adds_a_user_and_refuses_a_short_password_and_a_taken_name(api: Api) -> None:
    body = {"name": "linus", "role": "operator", "password": PASSWORD}
    made = api.call("POST", "/api/v1/users", "admin", body)
    again = api.call("POST", "/api/v1/users", "admin", body)
    short = api.call("POST", "/api/v1/users", "admin", {**body, "name": "l2", "password": "short"})
    missing = api.call("PUT", "/api/v1/users/nobody/role", "admin", {"role": "viewer"})

    assert made.status_code == 201, made.text
    assert made.json()["user"] | {"name": "linus", "role": "operator"} == made.json()["user"]
    assert PASSWORD not in made.text
    assert again.status_code == 409
    assert "user linus exists already" in problem_of(again)["detail"]
    assert short.status_code == 400
    assert "expected at least 12" in problem_of(short)["detail"]
    assert missing.status_code == 404
    assert "no user is named 'nobody'" in problem_of(missing)["detail"]
    [actor] = api.rows("SELECT CREATED_BY AS by FROM CFG_USERS WHERE USER_NAME = 'linus'")
    assert actor["by"] == "admin_token"
