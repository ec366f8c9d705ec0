"""Where the UI links tasks, tables and pipelines: pipelines to its own pages, a task the
selected run attempted to its latest attempt (its page shows the log), other tasks and tables
to the published catalog when Docs_site.base_url names one (else they stay unlinked)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from etl_craft.core.catalog_pages import table_page, task_page
from etl_craft.operations.context import OperationContext


@dataclass(frozen=True)
class UiLinks:
    catalog: str | None  # the catalog's base URL, ending with a slash
    attempts: Mapping[str, int] = field(default_factory=dict)  # pipeline.task -> attempt id

    def task(self, name: str) -> str | None:
        if name in self.attempts:
            return f"/attempts/{self.attempts[name]}"
        return None if self.catalog is None else self.catalog + task_page(name)

    def table(self, key: str) -> str | None:
        return None if self.catalog is None else self.catalog + table_page(key)

    def pipeline(self, code: str) -> str:
        return f"/pipelines/{quote(code, safe='')}"


def links_of(ctx: OperationContext, attempts: Mapping[str, int] | None = None) -> UiLinks:
    base = ctx.connector.docs_site.base_url if ctx.connector else None
    return UiLinks(base, attempts or {})
