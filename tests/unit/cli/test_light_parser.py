"""Building the CLI's parser imports no command's dependencies: each handler is imported when
its command runs, so `etl-craft --version` and --help start in milliseconds."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from etl_craft.cli.main import build_parser, command_named
from etl_craft.cli.registry import resolve

HEAVY = ("sqlalchemy", "fastapi", "duckdb", "sqlglot", "psycopg", "uvicorn", "jinja2", "pydantic")
# A fresh interpreter: this one has imported everything already. The module list goes to
# stderr's last line, since --version and --help write to stdout.
PROBE = """
import json, sys
from etl_craft.cli.main import build_parser, run
{action}
sys.stderr.write("\\n" + json.dumps(sorted(sys.modules)) + "\\n")
"""


def imported_by(action: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(action=action)],
        capture_output=True,
        text=True,
        check=True,
    )
    modules = json.loads(done.stderr.splitlines()[-1])
    return sorted({name.split(".")[0] for name in modules} & set(HEAVY))


@pytest.mark.parametrize(
    "action",
    [
        "build_parser()",
        "assert run(['--version']) == 0",
        "assert run(['--help']) == 0",
        "assert run(['server', '--help']) == 0",
        "assert run(['catalog', 'build', '--help']) == 0",
    ],
)
def test_building_the_parser_imports_no_heavy_package(action: str) -> None:
    assert imported_by(action) == []


def test_the_probe_sees_a_heavy_import() -> None:
    # A command that runs imports its handler and what that needs.
    assert "sqlalchemy" in imported_by("run(['--config', '/nonexistent.yml', 'reconcile'])")


def test_every_command_names_a_handler_that_exists() -> None:
    parsers = list(_commands(build_parser()))
    assert len(parsers) > 30
    for name, handler in parsers:
        assert callable(resolve(handler)), f"etl-craft {name}: {handler!r}"


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["logs", "--run-id", "1"], "logs"),
        (["--profile", "status", "--format=json", "logs"], "logs"),  # a global's value first
        (["--conf", "x.yml", "init-db"], "init-db"),  # abbreviated, as argparse allows
    ],
)
def test_a_command_builds_only_its_own_parser(argv: list[str], command: str) -> None:
    """Building all thirty commands' options and the services' costs every start ~20 ms."""
    assert command_named(argv) == command
    assert {name.split()[0] for name, _ in _commands(build_parser(command))} == {command}


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["-h"],
        ["-h", "logs"],
        ["--format", "xml", "logs"],
        ["statuss"],
        ["server"],
        [],
    ],
)
def test_anything_but_a_valid_built_in_command_builds_the_whole_parser(argv: list[str]) -> None:
    """Help, a typo, a bad global option or a service's command: the whole parser says it."""
    built = build_parser(command_named(argv))
    assert len({name.split()[0] for name, _ in _commands(built)}) > 30


def _commands(
    parser: argparse.ArgumentParser, prefix: str = "", handler: object = None
) -> Iterator[tuple[str, Any]]:
    """Every runnable command and its handler, its own or the one of the command above it."""
    handler = parser.get_default("handler") or handler
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not found:
        yield prefix.strip(), handler
        return
    for name, sub in found[0].choices.items():
        yield from _commands(sub, f"{prefix} {name}", handler)
