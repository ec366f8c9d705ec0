"""`etl-craft api`, `etl-craft token` and `etl-craft users`, and the `etl-craft-api` console
entry point."""

from __future__ import annotations

import argparse

from etl_craft.cli.main import main as cli_main
from etl_craft.cli.registry import Command
from etl_craft_api.options import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    configure_api,
    configure_token,
    configure_users,
)

API = Command(
    "api",
    f"serve the HTTP API (default {DEFAULT_HOST}:{DEFAULT_PORT}), or write its OpenAPI document",
    configure_api,
    "etl_craft_api.commands:handle_api",
)
TOKEN = Command(
    "token",
    "create, revoke and list HTTP API tokens",
    configure_token,
    "etl_craft_api.commands:handle_token",
)

USERS = Command(
    "users",
    "add, list, change the role of, disable, enable and set the password of web UI users",
    configure_users,
    "etl_craft_api.user_commands:handle_users",
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    API.add_to(subparsers)
    TOKEN.add_to(subparsers)
    USERS.add_to(subparsers)


def main() -> None:
    cli_main(prepend=["api"])
