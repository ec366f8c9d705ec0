"""Commands: built-in ones and those services contribute through the etl_craft.commands group.

Building the parser imports every command's declaration, so a declaration and its configure
function import nothing heavy; the handler is named by "module:function" and imported only
when its command runs (`etl-craft --version` must not pay for FastAPI or DuckDB).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import cast

from etl_craft.core.errors import UsageError

ENTRY_POINT_GROUP = "etl_craft.commands"
PROJECT_HELP = (
    "the project to act on, one of those the Engine DB holds (default: Orchestration.project "
    "of craft-connector.yml, else default)"
)

Handler = Callable[[argparse.Namespace], int]
# Run before the handler is imported: to start what runs beside that import (a fork server).
Prepare = Callable[[argparse.Namespace], None]
Configure = Callable[[argparse.ArgumentParser], None]
Register = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    configure: Configure | None
    handler: Handler | str  # the function, or "package.module:function" to import when run
    prepare: Prepare | None = None

    def add_to(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        parser = subparsers.add_parser(self.name, help=self.help, description=self.help)
        # Also accepted after the command; SUPPRESS keeps the global value when it is not given.
        parser.add_argument(
            "--format", choices=("text", "json"), default=argparse.SUPPRESS, dest="format"
        )
        if self.configure is not None:
            self.configure(parser)
        if "--project" not in parser._option_string_actions:  # a command may give it its own help
            parser.add_argument(
                "--project", metavar="P", default=argparse.SUPPRESS, help=PROJECT_HELP
            )
        parser.set_defaults(handler=self.handler, prepare=self.prepare)


def resolve(handler: Handler | str) -> Handler:
    """The handler function, imported now when it is named by "module:function"."""
    if not isinstance(handler, str):
        return handler
    module, _, name = handler.partition(":")
    found = getattr(import_module(module), name, None)
    if not callable(found):
        raise LookupError(
            f"command handler {handler!r} names no function; expected 'package.module:function'"
        )
    return cast(Handler, found)


def not_yet_available(name: str, what: str) -> Handler:
    def refuse(_: argparse.Namespace) -> int:
        raise UsageError(
            f"'etl-craft {name}' ({what}) is not part of this release yet; "
            "run pipelines in the foreground with the etl-craft CLI meanwhile"
        )

    return refuse


def contributed() -> list[Register]:
    """The register functions of every installed service, in name order."""
    # importlib.metadata (with the email package it reads metadata through) costs some 10 ms,
    # which a built-in command, whose parser needs no service's, never pays.
    from importlib.metadata import entry_points  # noqa: PLC0415

    found = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda entry: entry.name)
    return [entry.load() for entry in found]
