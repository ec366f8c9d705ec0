"""A YAML document read with the line of every key, and the problems found in it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from etl_craft.core.errors import ConfigurationError


@dataclass(frozen=True)
class Problem:
    path: Path
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.message}"


class Problems:
    """Every problem found in one load, so a user fixes them all in one pass."""

    def __init__(self) -> None:
        # A dict holds each problem once, however many paths lead to it.
        self._found: dict[Problem, None] = {}

    def add(self, path: Path, line: int | None, message: str) -> None:
        self._found[Problem(path, line, message)] = None

    def extend(self, problems: list[Problem]) -> None:
        for problem in problems:
            self._found[problem] = None

    def raise_if_any(self, subject: str) -> None:
        if not self._found:
            return
        count = len(self._found)
        noun = "problem" if count == 1 else "problems"
        ordered = sorted(self._found, key=lambda problem: (str(problem.path), problem.line or 0))
        lines = "\n".join(f"  {problem}" for problem in ordered)
        raise ConfigurationError(
            f"{subject} has {count} {noun}; fix each one and load it again:\n{lines}"
        )


class LocatedMapping(dict[str, object]):
    """A YAML mapping that remembers its own line and the line of each key."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.key_lines: dict[str, int] = {}

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


# libyaml's parser, where PyYAML was built with it, reads a file some ten times faster than
# the pure-Python one; both give the same nodes, marks and errors.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class StrictLoader(_SafeLoader):  # type: ignore[misc,valid-type]
    """A SafeLoader that reports duplicate keys, where PyYAML silently keeps the last one."""

    def __init__(self, text: str, path: Path) -> None:
        super().__init__(text)
        self.path = path
        self.duplicates: list[Problem] = []

    def construct_located_mapping(self, node: yaml.MappingNode) -> LocatedMapping:
        mapping = LocatedMapping(node.start_mark.line + 1)
        for key_node, value_node in node.value:
            # Keys are named by their text: `1:` or `yes:` then reads as an unknown key.
            name = str(self.construct_object(key_node, deep=True))
            line = key_node.start_mark.line + 1
            if name in mapping.key_lines:
                self.duplicates.append(_duplicate(self.path, name, line, mapping.key_lines[name]))
                continue
            mapping.key_lines[name] = line
            mapping[name] = self.construct_object(value_node, deep=True)
        return mapping


StrictLoader.add_constructor("tag:yaml.org,2002:map", StrictLoader.construct_located_mapping)


def _duplicate(path: Path, name: str, line: int, first_line: int) -> Problem:
    return Problem(
        path,
        line,
        f"key {name!r} appears again (first on line {first_line}); "
        f"expected each key once in a mapping: keep one of them",
    )


def read_document(path: Path) -> tuple[LocatedMapping, list[Problem]]:
    """The document's top mapping and its duplicate keys; unreadable files raise at once."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(
            f"cannot read {path}: {error}; expected a readable UTF-8 YAML file"
        ) from error
    loader = StrictLoader(text, path)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as error:
        raise ConfigurationError(_syntax_message(path, error)) from error
    finally:
        loader.dispose()
    if not isinstance(data, LocatedMapping):
        found = "an empty file" if data is None else f"a {type(data).__name__}"
        raise ConfigurationError(
            f"{path}:1: the document is {found}; expected a mapping of sections "
            f"such as Engine: and Warehouse:"
        )
    return data, loader.duplicates


def _syntax_message(path: Path, error: yaml.MarkedYAMLError) -> str:
    mark = error.problem_mark or error.context_mark
    where = f"{path}:{mark.line + 1}" if mark else str(path)
    return (
        f"{where}: not valid YAML ({error.problem or error.context}); "
        f"expected indented 'key: value' lines, fix the syntax at that line"
    )
