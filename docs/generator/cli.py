"""The CLI reference: every command and option, read from the parsers `etl-craft` builds."""

from __future__ import annotations

import argparse
import tomllib
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

from docs.generator.markdown import code, header, page, table

from etl_craft.cli.main import build_parser
from etl_craft.cli.registry import ENTRY_POINT_GROUP
from etl_craft.cli.vocabulary import DEPRECATED
from etl_craft.core.ranges import RangeArgument

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "the argparse parsers of etl_craft.cli.main and the services' commands"
INTRO = (
    "Every command of `etl-craft` with every option, as `etl-craft COMMAND --help` gives them. "
    "The global options go before the command; `--format` is accepted after it too. "
    "Every command names the same things the same way: `--pipeline`, `--task`, `--run` (a run "
    "by id), `--run-key` and `--run-date`. The spellings of earlier releases (`--pipeline_code`, "
    "`--pipeline-code`, `--task_code`, `--task-code`, `--run-id`, and `run --rerun` and "
    "`run --backfill`) still work for one minor release, with a deprecation warning on stderr. "
    "A mistyped command, option or choice is refused with the command's own usage and a "
    '"did you mean"; with `--format json` the refusal is also a JSON document on stdout '
    "(`etl-craft/error/1`, with its `exit_code`). Exit codes are listed in "
    "[Exit codes](exit-codes.md)."
)
SubParsers = argparse._SubParsersAction


def render() -> str:
    parser = build_parser()
    commands = _subcommands(parser)
    if commands is None:
        raise LookupError("etl-craft's parser has no subcommands; expected one per command")
    contributed = _contributed_by()
    lines = header("CLI", SOURCE, INTRO)
    lines += ["## Global options", "", f"`{_usage(parser, 'etl-craft')}`", ""]
    lines += _options(parser)
    lines += ["## Commands", ""]
    lines += table(
        ("command", "what it does"),
        ((f"[`{name}`](#{name})", _summary(sub)) for name, sub in commands.choices.items()),
    )
    for name, sub in commands.choices.items():
        lines += _command(name, sub, contributed.get(name))
    return page(lines)


def _command(name: str, parser: argparse.ArgumentParser, package: str | None) -> list[str]:
    lines = [f"## {name}", "", _sentence(parser.description or ""), ""]
    if _not_available(parser):
        lines += ["Not part of this release yet: the command exits with code 2 (usage).", ""]
    if package is not None:
        lines += [f"Installed with the `{package}` package.", ""]
    lines += ["", f"`{_usage(parser, parser.prog)}`", ""]
    lines += _options(parser)
    nested = _subcommands(parser)
    if nested is None:
        return lines
    for action, sub in nested.choices.items():
        summary = _sentence(sub.description or _help_of(nested, action))
        lines += [f"### {name} {action}", "", summary, ""]
        lines += [f"`{_usage(sub, sub.prog)}`", "", *_options(sub)]
    return lines


def _options(parser: argparse.ArgumentParser) -> list[str]:
    rows = [
        (_names(action), _value(action), _default(action), _help(action))
        for action in _documented(parser)
    ]
    if not rows:
        return ["No options.", ""]
    return table(("option", "value", "default", "description"), rows)


def _documented(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, SubParsers)):
            continue
        # The command-level --format repeats the global one (see the page's introduction).
        if action.dest == "format" and action.default is argparse.SUPPRESS:
            continue
        if action.help is argparse.SUPPRESS:  # a deprecated option, kept working, not taught
            continue
        yield action


def _names(action: argparse.Action) -> str:
    if not action.option_strings:
        return code(_metavar(action))
    shown = [name for name in action.option_strings if name not in DEPRECATED]
    return ", ".join(code(name) for name in shown)


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices is not None:
        return ", ".join(code(str(choice)) for choice in action.choices)
    return code(_metavar(action))


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    default = action.default
    if default is None or default is False or default is argparse.SUPPRESS or default == []:
        return ""
    return code(str(default))


def _help(action: argparse.Action) -> str:
    text = action.help or ""
    if "%(" in text:
        text = text % {**vars(action), "prog": ""}
    if isinstance(action, argparse._AppendAction) and "repeatable" not in text:
        text = f"{text}; repeatable" if text else "repeatable"
    if isinstance(action.type, RangeArgument):
        allowed = action.type.allowed
        bounds = f"{allowed.minimum} to {allowed.maximum}"
        text = f"{text} ({bounds})" if text else bounds
    return text


def _metavar(action: argparse.Action) -> str:
    if isinstance(action.metavar, str):
        return action.metavar
    return action.dest.upper() if action.option_strings else action.dest


def _usage(parser: argparse.ArgumentParser, prog: str) -> str:
    """The usage line, built from the actions so it reads the same on every terminal width."""
    grouped = {
        action: group
        for group in parser._mutually_exclusive_groups
        for action in group._group_actions
    }
    parts: list[str] = []
    shown: set[int] = set()
    for action in _documented(parser):
        group = grouped.get(action)
        if group is None:
            parts.append(_usage_part(action, optional=not action.required))
        elif id(group) not in shown:
            shown.add(id(group))
            choices = " | ".join(
                _usage_part(a, optional=False)
                for a in group._group_actions
                if a.help is not argparse.SUPPRESS
            )
            parts.append(f"({choices})" if group.required else f"[{choices}]")
    nested = _subcommands(parser)
    if nested is not None:
        choices = "{" + ",".join(nested.choices) + "}"
        parts.append(f"{_metavar(nested) if nested.metavar else choices} ...")
    return " ".join([prog, *parts])


def _usage_part(action: argparse.Action, *, optional: bool) -> str:
    if not action.option_strings:
        return _metavar(action)
    text = action.option_strings[0]
    if action.nargs != 0:
        value = "{" + ",".join(map(str, action.choices)) + "}" if action.choices else None
        text += f" {value or _metavar(action)}"
    return f"[{text}]" if optional else text


def _subcommands(
    parser: argparse.ArgumentParser,
) -> SubParsers[argparse.ArgumentParser] | None:
    for action in parser._actions:
        if isinstance(action, SubParsers):
            return action
    return None


def _help_of(subparsers: SubParsers[argparse.ArgumentParser], name: str) -> str:
    for choice in subparsers._choices_actions:
        if choice.dest == name:
            return choice.help or ""
    return ""


def _summary(parser: argparse.ArgumentParser) -> str:
    summary = parser.description or ""
    return f"{summary} (not in this release yet)" if _not_available(parser) else summary


def _not_available(parser: argparse.ArgumentParser) -> bool:
    handler = parser._defaults.get("handler")
    return getattr(handler, "__qualname__", "").startswith("not_yet_available.")


def _sentence(text: str) -> str:
    text = text.strip()
    return f"{text[0].upper()}{text[1:]}." if text else ""


def _contributed_by() -> dict[str, str]:
    """Command name -> the package contributing it; refused when a workspace service is missing."""
    installed = {entry.name: entry for entry in entry_points(group=ENTRY_POINT_GROUP)}
    expected = _workspace_commands()
    missing = sorted(set(expected) - set(installed))
    if missing:
        raise LookupError(
            f"the commands {', '.join(missing)} of the workspace's services are not installed, "
            "so the CLI reference would leave them out; install every package with "
            "uv sync --all-packages, then regenerate"
        )
    return {name: expected[name] for name in installed if name in expected}


def _workspace_commands() -> dict[str, str]:
    commands: dict[str, str] = {}
    for pyproject in sorted(ROOT.glob("services/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        group = project.get("entry-points", {}).get(ENTRY_POINT_GROUP, {})
        commands |= dict.fromkeys(group, project["name"])
    return commands
