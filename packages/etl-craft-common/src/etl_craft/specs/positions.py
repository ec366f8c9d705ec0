"""Where each key of a spec file is written: its line, found by the key path a problem names.

Problems are found on the parsed document (a JSON pointer such as /tasks/load/action) or on
the CFG_ rows it stands for; the user edits the file, so each is reported at the file's line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import yaml

KeyPath = tuple[str, ...]


def key_lines(text: str) -> dict[KeyPath, int]:
    """The 1-based line of every key and list item of a YAML document, by its key path."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    return dict(_walk(root, ())) if root is not None else {}


def file_key_lines(source: Path) -> dict[KeyPath, int]:
    try:
        return key_lines(source.read_text(encoding="utf-8"))
    except OSError:
        return {}


def _walk(node: yaml.Node, path: KeyPath) -> Iterator[tuple[KeyPath, int]]:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            inner = (*path, str(key.value))
            yield inner, key.start_mark.line + 1
            yield from _walk(value, inner)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            inner = (*path, str(index))
            yield inner, item.start_mark.line + 1
            yield from _walk(item, inner)


def line_of(lines: Mapping[KeyPath, int], path: Sequence[str]) -> int:
    """The line of ``path``, or of the nearest key above it that the file writes."""
    for end in range(len(path), 0, -1):
        line = lines.get(tuple(path[:end]))
        if line is not None:
            return line
    return 1


def pointer_path(pointer: str) -> KeyPath:
    """/tasks/load/action as ("tasks", "load", "action")."""
    return tuple(part for part in pointer.split("/") if part)


def dotted(path: Sequence[str]) -> str:
    return ".".join(path) or "(the document)"


def shown(source: Path) -> str:
    """The file as the user knows it in the project: pipelines/orders.yml."""
    return f"{source.parent.name}/{source.name}"
