"""Where each page of the site lives, and relative links between pages.

Every link is relative, so that the site works opened from disk and served under any path
prefix. File names keep letters, digits, '.', '_' and '-'; any other character is written as
'~' and its code point, so two names never share a file.
"""

from __future__ import annotations

import posixpath
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

SEARCH = "index.html"
DAGS = "dags.html"
WAREHOUSE = "warehouse.html"


def slug(name: str) -> str:
    return _UNSAFE.sub(lambda m: f"~{ord(m.group(0)):x}~", name) or "~"


def pipeline_page(code: str) -> str:
    return f"pipelines/{slug(code)}.html"


def task_page(name: str) -> str:
    pipeline, task = name.split(".", 1)
    return f"tasks/{slug(pipeline)}/{slug(task)}.html"


def rule_page(name: str) -> str:
    pipeline, task, rule = name.split(".", 2)
    return f"rules/{slug(pipeline)}/{slug(task)}/{slug(rule)}.html"


def table_page(key: str) -> str:
    return f"tables/{slug(key)}.html"


def script_page(path: str) -> str:
    return f"scripts/{slug(path)}.html"


def anchor(*parts: str | None) -> str:
    return "-".join(slug(p or "default") for p in parts)


def relative(from_page: str, to_page: str) -> str:
    """The link from one page to another (either may carry a #fragment)."""
    target, _, fragment = to_page.partition("#")
    here, there = from_page.split("/")[:-1], target.split("/")
    if _UNPLAIN & {*here, *there}:
        link = posixpath.relpath(target, posixpath.dirname(from_page) or ".")
    else:
        # Site paths are plain relative paths: a segment walk gives relpath's answer without
        # its two abspath calls, which a build of thousands of pages made a fifth of its time.
        common = 0
        while common < min(len(here), len(there) - 1) and here[common] == there[common]:
            common += 1
        link = "/".join([".."] * (len(here) - common) + there[common:])
    return f"{link}#{fragment}" if fragment else link


_UNPLAIN = frozenset({"", ".", ".."})


def root_of(page: str) -> str:
    """The relative path from a page to the site's root folder ('' at the root)."""
    depth = page.count("/")
    return "../" * depth
