"""Secrets are variable names, resolved by the configured provider: by default the environment
first, then the project's .env."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path

from etl_craft.config.document import Problem
from etl_craft.config.providers import CachedProvider, SecretNotFoundError, SecretsProvider

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
    # Imported here: most projects have no .env, and a reading command need not load the parser.
    from dotenv.parser import parse_stream  # noqa: PLC0415

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
    """Looks variables up in its providers, in order, and remembers every value it handed
    out, so logs can redact them, and when the first cached one of them expires."""

    def __init__(self, providers: Sequence[SecretsProvider]):
        self._providers = providers
        self._resolved: set[str] = set()
        self._expires_at: float | None = None

    @property
    def resolved(self) -> frozenset[str]:
        return frozenset(self._resolved)

    @property
    def expires_at(self) -> float | None:
        """When (on ``providers.clock``) a value it handed out may have been rotated: the
        configuration should be read again then. None when no value came from a cache."""
        return self._expires_at

    def remember(self, value: str) -> None:
        """Mark a value found inside a resolved one (a URL's password) as secret too."""
        self._resolved.add(value)

    def resolve(self, variable: str) -> str:
        for provider in self._providers:
            try:
                value = self._get(provider, variable)
            except SecretNotFoundError:
                continue
            if not value.strip():
                raise UnresolvedSecretError(
                    f"which is empty in {provider.where}; give {variable} its value there"
                )
            self._resolved.add(value)
            return value
        wheres = [provider.where for provider in self._providers]
        where = "one of them" if len(wheres) > 1 else "it"
        raise UnresolvedSecretError(
            f"which is not set in {' nor in '.join(wheres)}; "
            f"set {variable} in {where}{self._near_misses(variable)}"
        )

    def _get(self, provider: SecretsProvider, variable: str) -> str:
        if not isinstance(provider, CachedProvider):
            return provider.get(variable)
        try:
            value, expires_at = provider.fetch(variable)
        except SecretNotFoundError:
            raise
        except Exception as error:
            # The provider's own message (an address, a status) never holds the value.
            raise UnresolvedSecretError(
                f"which could not be read from {provider.where}: {type(error).__name__}: "
                f"{error}; check the provider is reachable and etl-craft may read {variable}"
            ) from error
        self._expires_at = min(expires_at, self._expires_at or expires_at)
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
        known = [name for provider in self._providers for name in provider.names()]
        close = difflib.get_close_matches(variable, known, n=3)
        return f" (similar names that are set: {', '.join(close)})" if close else ""
