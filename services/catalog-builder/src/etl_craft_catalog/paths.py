"""Where each page of the site lives (etl_craft.core.catalog_pages, which other services link
to), and relative links between pages.

Every link is relative, so that the site works opened from disk and served under any path
prefix.
"""

from __future__ import annotations

import posixpath

from etl_craft.core.catalog_pages import (
    anchor,
    pipeline_page,
    rule_page,
    script_page,
    slug,
    table_page,
    task_page,
)

__all__ = [
    "DAGS",
    "SEARCH",
    "WAREHOUSE",
    "anchor",
    "pipeline_page",
    "relative",
    "root_of",
    "rule_page",
    "script_page",
    "slug",
    "table_page",
    "task_page",
]

SEARCH = "index.html"
DAGS = "dags.html"
WAREHOUSE = "warehouse.html"


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
