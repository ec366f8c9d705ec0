"""Secrets are variable names: values come from the environment first, then the project's .env."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path

from dotenv.parser import parse_stream

from etl_craft.config.document import Problem

VARIABLE_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
REFERENCE_PATTERN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
VARIABLE_RULE = "a variable name such as SMTP_PASSWORD (letters, digits, underscores)"


class UnresolvedSecretError(ValueError):
    """A variable a configuration names is unset or empty; the message says where to set it."""


def template_problem(template: str) -> str | None:
    """Why ``template`` holds a malformed ``${...}`` reference, or None when all are well formed."""
    for start in (match.start() for match in re.finditer(r"\$\{", template)):
        if not REFERENCE_PATTERN.match(template, start):
            return (
                f"expected ${{NAME}} references only; the one at character {start + 1} is malformed"
            )
    return None


def read_env_file(path: Path) -> tuple[dict[str, str], list[Problem]]:
    """KEY=VALUE lines read as python-dotenv reads them: comments (inline ones too), `export`,
    quotes and the escapes of double-quoted values; no ${...} expansion."""
    if not path.is_file():
        return {}, []
    values: dict[str, str] = {}
    problems: list[Problem] = []
    with path.open(encoding="utf-8-sig") as stream:
        for binding in parse_stream(stream):
            key, value = binding.key, binding.value
            if key is None and not binding.error:
                continue  # a blank or comment line
            if key is None or value is None or binding.error or not VARIABLE_PATTERN.fullmatch(key):
                # The line may hold a secret, so the message never repeats it.
                line = binding.original.line + _leading_blank_lines(binding.original.string)
                problems.append(Problem(path, line, f"expected KEY=VALUE with KEY {VARIABLE_RULE}"))
                continue
            values[key] = value
    return values, problems


def _leading_blank_lines(text: str) -> int:
    # A binding that failed to parse starts at the blank lines before it.
    return len(text) - len(text.lstrip("\n"))


class SecretResolver:
    """Looks variables up and remembers every value it handed out, so logs can redact them."""

    def __init__(self, environ: Mapping[str, str], env_file: Path, file_values: dict[str, str]):
        self._environ = environ
        self._env_file = env_file
        self._file_values = file_values
        self._resolved: set[str] = set()

    @property
    def resolved(self) -> frozenset[str]:
        return frozenset(self._resolved)

    def remember(self, value: str) -> None:
        """Mark a value found inside a resolved one (a URL's password) as secret too."""
        self._resolved.add(value)

    def resolve(self, variable: str) -> str:
        if variable in self._environ:
            value, where = self._environ[variable], "the environment"
        elif variable in self._file_values:
            value, where = self._file_values[variable], str(self._env_file)
        else:
            raise UnresolvedSecretError(
                f"which is not set in the environment nor in {self._env_file}; "
                f"set {variable} in one of them{self._near_misses(variable)}"
            )
        if not value.strip():
            raise UnresolvedSecretError(
                f"which is empty in {where}; give {variable} its value there"
            )
        self._resolved.add(value)
        return value

    def substitute(self, template: str) -> tuple[str, list[str]]:
        """``template`` with each ${NAME} replaced, and one message per variable that failed."""
        failures: list[str] = []

        def replace(match: re.Match[str]) -> str:
            try:
                return self.resolve(match.group(1))
            except UnresolvedSecretError as error:
                failures.append(f"${{{match.group(1)}}}, {error}")
                return match.group(0)

        return REFERENCE_PATTERN.sub(replace, template), failures

    def _near_misses(self, variable: str) -> str:
        known = [*self._environ, *self._file_values]
        close = difflib.get_close_matches(variable, known, n=3)
        return f" (similar names that are set: {', '.join(close)})" if close else ""
