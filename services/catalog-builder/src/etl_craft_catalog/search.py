"""The search index, built at build time and written as a script that assigns a global, so the
Search tab works opened from disk (file:// refuses a page's fetch of a JSON file)."""

from __future__ import annotations

import json

from etl_craft.operations.catalog.views import Catalog
from etl_craft_catalog.paths import pipeline_page, rule_page, script_page, table_page, task_page

INDEX_FILE = "search-index.js"

Entry = dict[str, str]


def search_entries(catalog: Catalog) -> list[Entry]:
    entries = [
        _entry("pipeline", p.code, p.description, pipeline_page(p.code)) for p in catalog.pipelines
    ]
    entries += [_entry("task", t.name, t.description, task_page(t.name)) for t in catalog.tasks]
    for table in catalog.tables:
        entries.append(_entry("table", table.key, table.comment, table_page(table.key)))
        entries += [
            _entry(
                "column",
                f"{table.key}.{c.name}",
                " · ".join(filter(None, (c.type, c.comment))),
                f"{table_page(table.key)}#col-{c.name}",
            )
            for c in table.columns
        ]
    entries += [_entry("rule", r.name, r.description, rule_page(r.name)) for r in catalog.rules]
    entries += [_entry("script", s.path, None, script_page(s.path)) for s in catalog.scripts]
    return entries


def index_script(catalog: Catalog) -> str:
    data = json.dumps(search_entries(catalog), sort_keys=True, separators=(",", ":"))
    # "</" could end an inline script; the file is loaded with src, but stay safe if inlined.
    safe = data.replace("</", "<\\/")
    return f"window.CATALOG_INDEX = {safe};\n"


def _entry(kind: str, name: str, text: str | None, url: str) -> Entry:
    return {"type": kind, "name": name, "text": text or "", "url": url}
