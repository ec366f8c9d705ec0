"""Where each page of the catalog site lives, relative to the site's root.

Shared so that the web UI can link into a published catalog (Docs_site.base_url) with the
catalog's own paths. File names keep letters, digits, '.', '_' and '-'; any other character is
written as '~' and its code point, so two names never share a file.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


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
