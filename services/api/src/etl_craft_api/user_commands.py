"""`etl-craft users`: an admin's management of web UI users.

A password is never an argument (it would stay in the shell's history and the process list):
it is prompted for twice on a terminal, or read from the first line of stdin when piped.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.core.errors import UsageError
from etl_craft.operations.access.users import (
    UserChanged,
    UserList,
    UserRequest,
    add_user,
    disable_user,
    enable_user,
    list_users,
    set_user_password,
    set_user_role,
)


def handle_users(args: argparse.Namespace) -> int:
    action: str = args.action
    password = read_password(args.name) if _needs_password(args) else None
    ctx = operation_context(args)
    try:
        if action == "list":
            found = list_users(ctx)
            emit(found, args.format, render_list(found))
            return 0
        if action == "add":
            request = UserRequest(args.name, args.role, password, args.display_name, args.email)
            changed = add_user(ctx, request)
        elif action == "set-role":
            changed = set_user_role(ctx, args.name, args.role)
        elif action == "disable":
            changed = disable_user(ctx, args.name)
        elif action == "enable":
            changed = enable_user(ctx, args.name)
        else:
            assert password is not None
            changed = set_user_password(ctx, args.name, password)
        emit(changed, args.format, render_changed(changed))
    finally:
        ctx.close()
    return 0


def _needs_password(args: argparse.Namespace) -> bool:
    return args.action == "set-password" or (args.action == "add" and not args.no_password)


def read_password(name: str) -> str:
    if not sys.stdin.isatty():
        line = sys.stdin.readline()
        if not line.strip():
            raise UsageError(
                f"no password for user {name} on stdin; pipe it in (printf '%s\\n' \"$PASSWORD\" "
                "| etl-craft users ...), run the command on a terminal to be prompted, or add "
                "the user with --no-password to let them sign in only through the OpenID provider"
            )
        return line.rstrip("\r\n")
    first = getpass.getpass(f"password for {name}: ")
    if getpass.getpass(f"the password for {name} again: ") != first:
        raise UsageError(f"the two passwords typed for user {name} differ; run the command again")
    return first


def render_changed(changed: UserChanged) -> str:
    user = changed.user
    done = {
        "add": f"user {user.name} added with role {user.role}",
        "set-role": f"user {user.name} now has role {user.role} (from their next request)",
        "disable": f"user {user.name} disabled: their sessions end at their next request",
        "enable": f"user {user.name} enabled",
        "set-password": f"user {user.name} has a new password",
    }
    return done[changed.action]


def render_list(found: UserList) -> str:
    if not found.users:
        return "there are no users; add one with etl-craft users add"
    lines = []
    for user in found.users:
        state = "disabled" if user.disabled else "enabled"
        shown = f" ({user.display_name})" if user.display_name else ""
        lines.append(f"{user.name:<24} {user.role:<10} {user.source:<9} {state:<9}{shown}")
    return "\n".join(lines)
