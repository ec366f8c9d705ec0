"""The ``etl-craft`` entry point: parse, dispatch, and map errors to exit codes."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import NoReturn, cast

from etl_craft import __version__
from etl_craft.cli.banner import SUPPRESS_VARIABLE
from etl_craft.cli.banner import show as show_banner
from etl_craft.cli.commands import BUILT_IN
from etl_craft.cli.logs import configure_logging
from etl_craft.cli.registry import PROJECT_HELP, contributed, resolve
from etl_craft.cli.vocabulary import CraftParser, on_refusal
from etl_craft.core.errors import ConfigurationError, EtlCraftError, ExitCode
from etl_craft.runtime.stopping import SignalStop

log = logging.getLogger(__name__)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser: every command's, or with ``command`` (a built-in command's name) only
    that one's, which is all a command's run needs: building the other thirty and the
    services' costs every start some 20 ms."""
    parser: argparse.ArgumentParser = CraftParser(
        prog="etl-craft", description="A metadata-driven ETL orchestrator."
    )
    parser.add_argument("--version", action="version", version=f"etl-craft {__version__}")
    _add_global_options(parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    named = [built_in for built_in in BUILT_IN if built_in.name == command]
    for built_in in named or BUILT_IN:
        built_in.add_to(subparsers)
    if not named:
        for register in contributed():
            register(subparsers)
    return parser


def _add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="craft-connector.yml (default: found from the current folder upwards)",
    )
    parser.add_argument("--profile", help="the configuration profile to use")
    parser.add_argument("--project", metavar="P", help=PROJECT_HELP)
    parser.add_argument("--format", choices=("text", "json"), default="text", dest="format")
    parser.add_argument(
        "--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR")
    )
    parser.add_argument(
        "--no-banner",
        action="store_true",
        help=f"print no banner (also: {SUPPRESS_VARIABLE}=1); it shows only on a terminal, "
        "for demo, new, server, ui and api",
    )
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        help="log records as text or JSON lines (default: ETL_CRAFT_LOG_FORMAT, else text)",
    )


class _UnsureError(Exception):
    pass


class _QuietParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UnsureError(message)


def command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names, read past the global options as the whole parser reads
    them; None when argv names none or is not valid there (the whole parser then says why)."""
    globals_only = _QuietParser(prog="etl-craft", add_help=False)
    _add_global_options(globals_only)
    globals_only.add_argument("-h", "--help", action="store_true")  # help lists every command
    globals_only.add_argument("command", nargs="?")
    try:
        found, _ = globals_only.parse_known_args(argv)
    except _UnsureError:
        return None
    return None if found.help else cast(str | None, found.command)


def _log_format() -> str:
    # Imported once a command runs: the settings bring pydantic and SQLAlchemy, which
    # `etl-craft --version` and --help need not load.
    from etl_craft.config.settings import load_settings  # noqa: PLC0415

    try:
        return load_settings().log_format
    except ConfigurationError:
        return "text"  # the command itself reports the bad variable


def main(argv: Sequence[str] | None = None, *, prepend: Sequence[str] = ()) -> None:
    sys.exit(run([*prepend, *(sys.argv[1:] if argv is None else argv)]))


def run(argv: Sequence[str]) -> int:
    parser = build_parser(command_named(argv))
    reporting = on_refusal.set(_refused if json_wanted(argv) else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    finally:
        on_refusal.reset(reporting)
    configure_logging(args.log_level, args.log_format or _log_format())
    show_banner(args.command, args.format, args.no_banner, sys.stdout, __version__)
    try:
        if args.prepare is not None:
            args.prepare(args)
        return int(resolve(args.handler)(args))
    except EtlCraftError as error:
        log.debug("command %s failed", args.command, exc_info=True)
        return _failed(args, str(error), error.exit_code, type(error).__name__)
    except SignalStop as stop:
        return _failed(args, str(stop), stop.exit_code, "SignalStop")
    except KeyboardInterrupt:
        return _failed(args, "interrupted", 130, "KeyboardInterrupt")
    except Exception as error:  # the last line of defence: report, never hide
        log.exception("command %s failed unexpectedly", args.command)
        message = (
            f"unexpected {type(error).__name__}: {error}; "
            "rerun with --log-level DEBUG and report the traceback"
        )
        return _failed(args, message, ExitCode.UNEXPECTED, type(error).__name__)


ERROR_SCHEMA = "etl-craft/error/1"


def json_wanted(argv: Sequence[str]) -> bool:
    """--format json anywhere on the line: read before argparse, whose refusal it shapes."""
    words = list(argv)
    pairs = zip(words, [*words[1:], ""], strict=True)
    return "--format=json" in words or any(a == "--format" and b == "json" for a, b in pairs)


def error_document(command: str | None, exit_code: int, error: str, message: str) -> str:
    """The JSON a failed command prints under --format json: scripts read the exit code and
    the message from stdout as they read a success's document."""
    name = ExitCode(exit_code).name if exit_code in ExitCode._value2member_map_ else None
    return json.dumps(
        {
            "schema": ERROR_SCHEMA,
            "command": command,
            "exit_code": int(exit_code),
            "exit_name": name,
            "error": error,
            "message": message,
        },
        indent=2,
    )


def _failed(args: argparse.Namespace, message: str, exit_code: int, error: str) -> int:
    sys.stderr.write(f"etl-craft {args.command}: {message}\n")
    if getattr(args, "format", "text") == "json":
        sys.stdout.write(error_document(args.command, exit_code, error, message) + "\n")
    return int(exit_code)


def _refused(command: str | None, message: str) -> None:
    sys.stdout.write(error_document(command, ExitCode.USAGE, "UsageError", message) + "\n")
