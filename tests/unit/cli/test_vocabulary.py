"""One vocabulary: every command names a pipeline, task, run, run key and run date the same way,
still takes the spellings of earlier releases (with a warning on stderr), and refuses a wrong
word with its own usage and a suggestion."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from datetime import date

import pytest

from etl_craft.cli.main import build_parser, run
from etl_craft.cli.vocabulary import DEPRECATED, iso_date

CURRENT = {"--pipeline", "--task", "--run", "--run-key", "--run-date"}


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def _naming_options() -> list[tuple[tuple[str, ...], argparse.Action]]:
    """Every option of every command that names a pipeline, task or run: its dest says so."""
    dests = {"pipeline_code", "task_code", "task_codes", "run_id", "run_key", "run_date"}
    return [
        (path, action)
        for path, parser in _commands(build_parser())
        if path
        for action in parser._actions
        if action.dest in dests and action.option_strings
    ]


OPTIONS = _naming_options()
PARSER = build_parser()  # building it takes a while, parsing with it is cheap
COMMANDS = dict(_commands(PARSER))


def test_every_option_naming_a_pipeline_task_or_run_is_spelled_the_one_way() -> None:
    spelled = {action.option_strings[0] for _, action in OPTIONS}
    assert spelled == CURRENT
    # The walk reached the commands that act on runs, the new ones included.
    commands = {path[0] for path, _ in OPTIONS}
    assert {"run", "rerun", "backfill", "status", "explain", "logs", "mark", "history"} <= commands
    for _, action in OPTIONS:
        assert set(action.option_strings) - CURRENT <= set(DEPRECATED)


def _value(action: argparse.Action) -> str:
    return "2026-05-01" if action.dest == "run_date" else "7"


def _line(path: tuple[str, ...], action: argparse.Action, option: str) -> list[str]:
    """A command line that parses: the command's other required options filled in."""
    parser = COMMANDS[path]
    words = [*path, option, _value(action)]
    for other in parser._actions:
        if other.required and other.option_strings and other.dest != action.dest:
            filler = "2026-05-01" if other.type is iso_date else "7"
            words += [other.option_strings[0], other.choices[0] if other.choices else filler]  # type: ignore[index]
    return words


NAMES = [
    pytest.param(path, action, option, id=f"{' '.join(path)} {option}")
    for path, action in OPTIONS
    for option in action.option_strings
]


@pytest.mark.parametrize(("path", "action", "option"), NAMES)
def test_every_command_takes_the_new_name_and_the_old_ones(
    path: tuple[str, ...], action: argparse.Action, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parsed = PARSER.parse_args(_line(path, action, option))

    value = getattr(parsed, action.dest)
    expected: object = {"run_id": 7, "run_date": date(2026, 5, 1)}.get(action.dest, "7")
    assert value == ([expected] if action.dest == "task_codes" else expected)
    captured = capsys.readouterr()
    assert captured.out == ""  # a warning never reaches stdout, where JSON goes
    if option in DEPRECATED:
        assert f"{option} is deprecated" in captured.err
        assert f"use {DEPRECATED[option]}" in captured.err
    else:
        assert captured.err == ""


def test_help_shows_only_the_current_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    shown = capsys.readouterr().out
    assert "--pipeline P" in shown
    assert "--task T" in shown
    for old in DEPRECATED:
        assert old not in shown


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_mistyped_command_is_refused_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _refused(capsys, "runn", "--pipeline", "orders")
    assert code == 2
    assert out == ""
    assert "'runn' is not an etl-craft command (did you mean 'run'?)" in err


def test_a_mistyped_option_is_refused_with_the_command_s_own_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _refused(capsys, "logs", "--attempt", "3", "--folow")
    assert code == 2
    assert err.startswith("usage: etl-craft logs ")
    assert "unrecognized arguments: --folow (did you mean --follow?)" in err

    # A word from another tool gets this one's.
    code, _, err = _refused(capsys, "rerun", "--pipeline", "p", "--task", "t", "--dry-run")
    assert code == 2
    assert err.startswith("usage: etl-craft rerun ")
    assert "(did you mean --plan?)" in err


def test_a_mistyped_choice_is_refused_with_a_suggestion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _refused(capsys, "mark", "--pipeline", "p", "--status", "sucess")
    assert code == 2
    assert err.startswith("usage: etl-craft mark ")
    assert "invalid choice 'sucess' (did you mean 'SUCCESS'?)" in err
    assert "expected one of SUCCESS, FAILED, SKIPPED" in err


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("2026-13-01", "has month 13, and months go from 01 to 12"),
        ("2026-02-30", "has day 30, and February 2026 has 28 days"),
        ("1/5/2026", "is not written YYYY-MM-DD"),
    ],
)
def test_a_wrong_date_says_what_is_wrong(
    text: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _refused(capsys, "run", "--pipeline", "p", "--run-date", text)
    assert code == 2
    assert f"argument --run-date: {text!r} {said}; expected a date, YYYY-MM-DD" in err
    assert "fromisoformat" not in err


def test_a_refusal_under_format_json_is_a_json_document_on_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _refused(
        capsys, "--format", "json", "mark", "--pipeline", "p", "--status", "X"
    )
    document = json.loads(out)
    assert code == 2
    assert document["schema"] == "etl-craft/error/1"
    assert document["exit_code"] == 2
    assert document["exit_name"] == "USAGE"
    assert document["command"] == "mark"
    assert "invalid choice 'X'" in document["message"]
    assert "usage: etl-craft mark" in err  # people still read the usage


def test_a_failure_under_format_json_is_a_json_document_with_its_exit_code(
    capsys: pytest.CaptureFixture[str], tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(str(tmp_path))
    monkeypatch.delenv("ETL_CRAFT_ENGINE_URL", raising=False)
    code, out, _ = _refused(capsys, "status", "--pipeline", "p", "--format", "json")
    document = json.loads(out)
    assert code == 3
    assert document["exit_code"] == 3
    assert document["exit_name"] == "CONFIGURATION"
    assert document["error"] == "ConfigurationError"
    assert "no Engine DB to use" in document["message"]
