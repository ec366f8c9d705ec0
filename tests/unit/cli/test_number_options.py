"""Every numeric option of every command, the services' included, has a range it enforces."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from etl_craft.cli.main import build_parser
from etl_craft.cli.vocabulary import DEPRECATED
from etl_craft.core.ranges import RangeArgument


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def _options() -> Iterator[tuple[tuple[str, ...], argparse.Action]]:
    for path, parser in _commands(build_parser()):
        for action in parser._actions:
            if action.option_strings and action.type is not None:
                yield path, action


RANGED = [(path, action) for path, action in _options() if isinstance(action.type, RangeArgument)]
NUMERIC = [
    pytest.param(path, action, id=" ".join((*path, action.option_strings[-1])))
    for path, action in RANGED
]


def test_no_option_reads_a_number_without_a_range() -> None:
    unbounded = [
        f"{' '.join(path)} {action.option_strings[-1]}"
        for path, action in _options()
        if action.type in (int, float)
    ]
    assert unbounded == []
    assert len(NUMERIC) >= 20  # the walk found the commands, services' included
    assert {"history", "worker", "api"} <= {path[0] for path, _ in RANGED}


@pytest.mark.parametrize(("path", "action"), NUMERIC)
@pytest.mark.parametrize("offset", [1, 10**20])
def test_a_number_above_its_range_is_a_usage_error(
    path: tuple[str, ...],
    action: argparse.Action,
    offset: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert isinstance(action.type, RangeArgument)
    allowed = action.type.allowed
    too_large = str(int(allowed.maximum) + offset)

    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args([*path, action.option_strings[-1], too_large])

    assert stopped.value.code == 2
    error = capsys.readouterr().err
    shown = [string for string in action.option_strings if string not in DEPRECATED]
    assert f"argument {'/'.join(shown)}: {too_large} is out of range" in error
    assert f"from {allowed.minimum} to {allowed.maximum}" in error
    assert "Traceback" not in error


@pytest.mark.parametrize(("path", "action"), NUMERIC)
def test_the_range_s_ends_are_accepted(path: tuple[str, ...], action: argparse.Action) -> None:
    assert isinstance(action.type, RangeArgument)
    allowed = action.type.allowed
    for end in (allowed.minimum, allowed.maximum):
        assert action.type(str(end)) == end
