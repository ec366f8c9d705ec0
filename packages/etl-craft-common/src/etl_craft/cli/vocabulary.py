"""One vocabulary for every command: the options that name a pipeline, a task, a run, a run key
and a run date are declared here once, with the spellings of earlier releases kept as hidden
aliases that still work and warn; and the parser every command uses, whose errors print the
command's own usage with a "did you mean".

Light to import: the parser is built on every start, `etl-craft --version` included.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from calendar import monthrange
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from datetime import date
from typing import Any, NoReturn

from etl_craft.core import ranges

# An earlier release's option string -> the one that replaces it. Each keeps working for at
# least one minor release (docs/reference/compatibility.md), with a warning on stderr.
DEPRECATED: dict[str, str] = {
    "--pipeline_code": "--pipeline",
    "--pipeline-code": "--pipeline",
    "--task_code": "--task",
    "--task-code": "--task",
    "--run-id": "--run",
    # Flags of `run` that became commands of their own.
    "--rerun": "etl-craft rerun",
    "--backfill": "etl-craft backfill --from FROM --to TO",
}
# Words people bring from other tools, suggested when difflib finds nothing close.
SYNONYMS: dict[str, str] = {
    "--dry-run": "--plan",
    "--dag": "--pipeline",
    "--dag-id": "--pipeline",
    "--task-id": "--task",
    "--execution-date": "--run-date",
    "--logical-date": "--run-date",
}
REMOVAL = "2.0"


def warn_deprecated(old: str, new: str) -> None:
    sys.stderr.write(
        f"etl-craft: {old} is deprecated and will be removed in {REMOVAL}; use {new}\n"
    )


class _Warns(argparse.Action):
    """Warns when the option was spelled the old way; the value is stored as usual."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if option_string in DEPRECATED:
            warn_deprecated(option_string, DEPRECATED[option_string])
        super().__call__(parser, namespace, values, option_string)


class _Store(_Warns, argparse._StoreAction):
    pass


class _Append(_Warns, argparse._AppendAction):
    pass


class _StoreTrue(_Warns, argparse._StoreTrueAction):
    pass


def replaced(parser: Adder, option: str, **kwargs: Any) -> None:
    """An option that became a command: accepted, warned about, hidden from help."""
    assert option in DEPRECATED, option
    flag = kwargs.get("action") == "store_true"
    kwargs["action"] = _StoreTrue if flag else _Store
    parser.add_argument(option, help=argparse.SUPPRESS, **kwargs)


def _strings(new: str, *old: str) -> list[str]:
    for alias in old:
        assert DEPRECATED[alias] == new, alias
    return [new, *old]


Adder = argparse.ArgumentParser | argparse._ArgumentGroup


def pipeline(parser: Adder, *, required: bool = True, help: str = "the pipeline, by code") -> None:
    """--pipeline P (dest pipeline_code)."""
    parser.add_argument(
        *_strings("--pipeline", "--pipeline_code", "--pipeline-code"),
        dest="pipeline_code",
        metavar="P",
        required=required,
        action=_Store,
        help=help,
    )


def task(
    parser: Adder,
    *,
    required: bool = False,
    repeatable: bool = False,
    help: str = "the task, by code",
) -> None:
    """--task T: dest task_code, or task_codes (a list) when repeatable."""
    parser.add_argument(
        *_strings("--task", "--task_code", "--task-code"),
        dest="task_codes" if repeatable else "task_code",
        metavar="T",
        required=required,
        action=_Append if repeatable else _Store,
        default=[] if repeatable else None,
        help=help,
    )


def run(parser: Adder, *, required: bool = False, help: str = "the run, by id") -> None:
    """--run R (dest run_id)."""
    parser.add_argument(
        *_strings("--run", "--run-id"),
        dest="run_id",
        metavar="R",
        type=ranges.ID.argument(),
        required=required,
        action=_Store,
        help=help,
    )


def run_key(parser: Adder, *, help: str = "the run, by its key") -> None:
    parser.add_argument("--run-key", metavar="KEY", help=help)


def run_date(parser: Adder, *, help: str = "the run date, YYYY-MM-DD") -> None:
    parser.add_argument("--run-date", metavar="YYYY-MM-DD", type=iso_date, help=help)


_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def iso_date(text: str) -> date:
    """An argparse ``type=`` for YYYY-MM-DD that says what is wrong with a refused date."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        pass
    shape = _DATE.fullmatch(text.strip())
    if shape is None:
        fault = "is not written YYYY-MM-DD"
    else:
        year, month, day = (int(part) for part in shape.groups())
        if not 1 <= month <= 12:
            fault = f"has month {month}, and months go from 01 to 12"
        else:
            days = monthrange(year, month)[1] if year >= 1 else 31
            fault = f"has day {day}, and {date(max(year, 1), month, 1):%B %Y} has {days} days"
    raise argparse.ArgumentTypeError(
        f"{text!r} {fault}; expected a date, YYYY-MM-DD, e.g. {date.today().isoformat()}"
    )


class CraftFormatter(argparse.HelpFormatter):
    """Help that lists an option's current spelling only, not its deprecated aliases."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        shown = [string for string in action.option_strings if string not in DEPRECATED]
        if not action.option_strings or shown == action.option_strings:
            return super()._format_action_invocation(action)
        clone = argparse.Action(shown, action.dest, action.nargs, metavar=action.metavar)
        return super()._format_action_invocation(clone)


# Called with (command, message) when a command line is refused, before the exit: the
# entry point sets it under --format json to print the refusal as a document too.
on_refusal: ContextVar[Callable[[str | None, str], None] | None] = ContextVar(
    "on_refusal", default=None
)


class CraftParser(argparse.ArgumentParser):
    """argparse with errors that name the command's own usage and suggest the likely word."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", CraftFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        for old in DEPRECATED:  # argparse names an option by all its strings: show the current
            message = message.replace(f"/{old}", "")
        command = " ".join(self.prog.split()[1:]) or None
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        report = on_refusal.get()
        if report is not None:
            report(command, message)
        sys.exit(2)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        found, extras = super().parse_known_args(args, namespace)
        # A command's parser reads every word after the command: a word it leaves is wrong
        # here, so say it with this command's usage, not the top level's.
        if extras and " " in self.prog:
            self.error(self._unrecognized(extras))
        return found, extras

    def _unrecognized(self, extras: Sequence[str]) -> str:
        said = f"unrecognized arguments: {' '.join(extras)}"
        for extra in extras:
            if extra.startswith("-"):
                hint = self.suggest_option(extra.split("=", 1)[0])
                if hint:
                    return f"{said} (did you mean {hint}?)"
        return said

    def suggest_option(self, word: str) -> str | None:
        known = [
            string
            for action in self._actions
            for string in action.option_strings
            if action.help is not argparse.SUPPRESS
        ]
        if word in DEPRECATED and DEPRECATED[word] in known:
            return DEPRECATED[word]
        current = [string for string in known if string not in DEPRECATED]
        if SYNONYMS.get(word) in current:
            return SYNONYMS[word]
        close = difflib.get_close_matches(word, current, n=1, cutoff=0.7)
        if close:
            return close[0]
        close = difflib.get_close_matches(word, list(DEPRECATED), n=1, cutoff=0.8)
        if close and DEPRECATED[close[0]] in current:
            return DEPRECATED[close[0]]
        return None

    def _get_option_tuples(self, option_string: str) -> list[Any]:
        # An abbreviation that matches an option and its aliases names one option, not several.
        found = super()._get_option_tuples(option_string)
        by_action: dict[int, Any] = {}
        for row in found:
            by_action.setdefault(id(row[0]), row)
        return list(by_action.values())

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is None or value in action.choices:
            return
        names = [str(choice) for choice in action.choices]
        hint = did_you_mean(str(value), names)
        if isinstance(action, argparse._SubParsersAction):
            message = f"{value!r} is not an etl-craft command{hint}; etl-craft --help lists them"
        else:
            message = f"invalid choice {value!r}{hint}; expected one of {', '.join(names)}"
        raise argparse.ArgumentError(action, message)


def did_you_mean(word: str, names: Iterable[str]) -> str:
    """' (did you mean "x"?)' for the name closest to ``word`` (case aside), else ''."""
    by_fold = {name.casefold(): name for name in names}
    close = difflib.get_close_matches(word.casefold(), list(by_fold), n=1, cutoff=0.6)
    return f" (did you mean {by_fold[close[0]]!r}?)" if close else ""
