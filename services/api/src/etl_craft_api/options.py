"""The options of `etl-craft api`, `etl-craft token` and `etl-craft users`: light, imported to
build the parser."""

from __future__ import annotations

import argparse
from pathlib import Path

from etl_craft.core import ranges
from etl_craft.core.enums import Role

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8730


def configure_api(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"default {DEFAULT_HOST}")
    parser.add_argument(
        "--port", type=ranges.PORT.argument(), default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}"
    )
    parser.add_argument(
        "--max-body-bytes",
        type=ranges.BODY_BYTES.argument(),
        metavar="N",
        help="refuse (413) a request body over N bytes (default: ETL_CRAFT_API_MAX_BODY_BYTES, "
        "else 1 MiB)",
    )
    parser.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="log a line per request at INFO, whatever --log-level says (default: on)",
    )
    parser.add_argument(
        "--write-openapi",
        metavar="PATH",
        type=Path,
        help="write the OpenAPI document to PATH and exit, without serving",
    )


def configure_token(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create a token and print it, once")
    create.add_argument("--name", required=True, help="the token's name: the actor of its actions")
    create.add_argument("--role", required=True, choices=[role.value for role in Role])
    create.add_argument("--expires", metavar="90d|12h", help="its lifetime (default: never ends)")
    revoke = actions.add_parser("revoke", help="revoke the live token with this name")
    revoke.add_argument("--name", required=True)
    listing = actions.add_parser("list", help="list the tokens, without secrets")
    for sub in (create, revoke, listing):
        sub.add_argument("--format", choices=("text", "json"), default=argparse.SUPPRESS)


def configure_users(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    roles = [role.value for role in Role]
    add = actions.add_parser(
        "add", help="add a user; the password is prompted for, or read from stdin when piped"
    )
    add.add_argument("--name", required=True, help="the user name: the actor of their actions")
    add.add_argument("--role", required=True, choices=roles)
    add.add_argument("--display-name", help="the name shown for the user")
    add.add_argument("--email", help="where the user is told")
    add.add_argument(
        "--no-password",
        action="store_true",
        help="no password: the user signs in only through the OpenID provider",
    )
    set_role = actions.add_parser(
        "set-role", help="give a user another role (from their next request)"
    )
    set_role.add_argument("--name", required=True)
    set_role.add_argument("--role", required=True, choices=roles)
    disable = actions.add_parser("disable", help="refuse a user, from their next request on")
    disable.add_argument("--name", required=True)
    enable = actions.add_parser("enable", help="let a disabled user sign in again")
    enable.add_argument("--name", required=True)
    password = actions.add_parser(
        "set-password", help="set a user's password: prompted for, or read from stdin when piped"
    )
    password.add_argument("--name", required=True)
    listing = actions.add_parser("list", help="list the users, without their password hashes")
    for sub in (add, set_role, disable, enable, password, listing):
        sub.add_argument("--format", choices=("text", "json"), default=argparse.SUPPRESS)
