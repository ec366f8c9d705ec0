"""What a drawing is made of: nodes with optional port rows, and edges between nodes or ports.

Values are checked when built, so the layout and the SVG never meet an unsafe link or a class
name that would split into several.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_KIND = re.compile(r"[A-Za-z0-9_-]+")
# Browsers drop tabs and newlines inside a URL and ignore leading blanks and control characters,
# so "java\tscript:" and " javascript:" run script too.
_URL_NOISE = re.compile(r"[\x00-\x20\x7f]")
_SCRIPT_SCHEMES = ("javascript:", "vbscript:", "data:")


def _check_href(owner: str, href: str | None) -> None:
    if href is None:
        return
    scheme = _URL_NOISE.sub("", href).lower()
    if scheme.startswith(_SCRIPT_SCHEMES):
        raise ValueError(
            f"{owner} has href {href!r}, a script or data URL; expected a page link "
            "(relative path or http(s) URL); link to the asset's page instead"
        )


def _check_kind(owner: str, kind: str) -> None:
    if not _KIND.fullmatch(kind):
        raise ValueError(
            f"{owner} has kind {kind!r}; expected letters, digits, '-' or '_' (it becomes a CSS "
            "class suffix); use a name such as 'table' or 'derived'"
        )


@dataclass(frozen=True, slots=True)
class Port:
    """A row inside a node, such as a column of a table. Its id is unique across the drawing."""

    id: str
    label: str
    href: str | None = None
    title: str | None = None

    def __post_init__(self) -> None:
        _check_href(f"port {self.id!r}", self.href)


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    label: str
    kind: str
    href: str | None = None
    ports: tuple[Port, ...] = ()
    title: str | None = None
    badge: str | None = None
    state: str | None = None  # a run's status of the node (class state-<state>), if shown

    def __post_init__(self) -> None:
        _check_href(f"node {self.id!r}", self.href)
        _check_kind(f"node {self.id!r}", self.kind)
        if self.state is not None:
            _check_kind(f"node {self.id!r}'s state", self.state)


@dataclass(frozen=True, slots=True)
class Edge:
    """From `source` to `target`, each a node id or a port id."""

    source: str
    target: str
    kind: str
    title: str | None = None

    def __post_init__(self) -> None:
        _check_kind(f"edge {self.source!r} -> {self.target!r}", self.kind)
