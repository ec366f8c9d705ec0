"""Every page under docs/ is in the mkdocs.yml nav, and every nav entry names a file that exists."""

from __future__ import annotations

from collections.abc import Iterator

import yaml
from docs.generate import DOCS

CONFIG = DOCS.parent / "mkdocs.yml"


def test_every_page_is_in_the_nav() -> None:
    pages = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    missing = sorted(pages - set(nav_entries()))
    assert not missing, f"pages not in the nav of mkdocs.yml: {', '.join(missing)}; add them"


def test_every_nav_entry_exists() -> None:
    absent = [entry for entry in nav_entries() if not (DOCS / entry).is_file()]
    assert not absent, f"mkdocs.yml's nav names files docs/ lacks: {', '.join(absent)}"


def test_no_page_is_in_the_nav_twice() -> None:
    entries = list(nav_entries())
    repeated = sorted({entry for entry in entries if entries.count(entry) > 1})
    assert not repeated, f"mkdocs.yml's nav names these pages more than once: {repeated}"


def nav_entries() -> Iterator[str]:
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    yield from _walk(config["nav"])


def _walk(node: object) -> Iterator[str]:
    if isinstance(node, str):
        if "://" not in node:
            yield node
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)
    elif isinstance(node, dict):
        for value in node.values():
            yield from _walk(value)


def test_the_walk_finds_nested_entries() -> None:
    nav = [{"Home": "index.md"}, {"Guides": [{"A": "guides/a.md"}, "guides/b.md"]}]
    assert list(_walk(nav)) == ["index.md", "guides/a.md", "guides/b.md"]
