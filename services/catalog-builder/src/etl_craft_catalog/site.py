"""Write the catalog site into a folder: every page, its assets, the logo and the search index.

Pages are Jinja2 templates packaged with this module; every link is made relative to the page
it is on. Output depends on the catalog alone (its build time included), so two builds of the
same metadata and runs differ only in that timestamp.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from etl_craft.branding import LOGOS, logo
from etl_craft.operations.catalog.dag import pipeline_dag
from etl_craft.operations.catalog.views import Catalog
from etl_craft_catalog import paths
from etl_craft_catalog.graphs import LineageIndex, PageLinks, port_id, table_lineage
from etl_craft_catalog.search import INDEX_FILE, index_script

ASSETS = ("catalog.css", "catalog.js")
Crumbs = list[tuple[str, str | None]]


@dataclass(frozen=True)
class Page:
    path: str
    template: str
    title: str
    crumbs: Crumbs  # (label, target page or None for the current one)
    values: dict[str, Any]


def write_site(catalog: Catalog, folder: Path, on_page: Callable[[str], None] | None = None) -> int:
    """Write every page under ``folder``; returns the number of pages written."""
    environment = _environment()
    written = 0
    for page in _pages(catalog):
        target = folder / page.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_render(environment, catalog, page), encoding="utf-8")
        written += 1
        if on_page is not None:
            on_page(page.path)
    static = files("etl_craft_catalog") / "static"
    for asset in ASSETS:
        (folder / asset).write_text((static / asset).read_text(encoding="utf-8"), encoding="utf-8")
    for name in LOGOS:
        (folder / name).write_bytes(logo(name))
    (folder / INDEX_FILE).write_text(index_script(catalog), encoding="utf-8")
    return written


def page_count(catalog: Catalog) -> int:
    fixed = 3  # Search, DAGs, Warehouse
    return fixed + sum(
        len(group)
        for group in (
            catalog.pipelines,
            catalog.tasks,
            catalog.tables,
            catalog.rules,
            catalog.scripts,
        )
    )


def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("etl_craft_catalog", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["stamp"] = lambda value: (
        "" if value is None else f"{value:%Y-%m-%d %H:%M:%S}Z"
    )
    return environment


def _render(environment: Environment, catalog: Catalog, page: Page) -> str:
    def url(target: str) -> str:
        return paths.relative(page.path, target)

    crumbs = [(label, None if target is None else url(target)) for label, target in page.crumbs]
    return environment.get_template(page.template).render(
        catalog=catalog,
        page=page,
        crumbs=crumbs,
        root=paths.root_of(page.path),
        url=url,
        paths=paths,
        port_id=port_id,
        built=catalog.built_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        **page.values,
    )


def _pages(catalog: Catalog) -> Iterator[Page]:
    yield Page(paths.SEARCH, "search.html", "Search", [("Search", None)], {})
    yield Page(paths.DAGS, "dags.html", "DAGs", [("DAGs", None)], {})
    yield Page(
        paths.WAREHOUSE,
        "warehouse.html",
        "Warehouse",
        [("Warehouse", None)],
        {"databases": _warehouse_tree(catalog)},
    )
    tasks = {t.name: t for t in catalog.tasks}
    for pipeline in catalog.pipelines:
        path = paths.pipeline_page(pipeline.code)
        yield Page(
            path,
            "pipeline.html",
            pipeline.code,
            _pipeline_crumbs(pipeline.code),
            {
                "pipeline": pipeline,
                "dag": _svg(pipeline_dag(catalog, pipeline, PageLinks(path))),
                "tasks": tasks,
            },
        )
    for task in catalog.tasks:
        yield Page(
            paths.task_page(task.name),
            "task.html",
            task.name,
            [
                ("DAGs", paths.DAGS),
                (task.pipeline_code, paths.pipeline_page(task.pipeline_code)),
                (task.code, None),
            ],
            {"task": task},
        )
    yield from _rule_pages(catalog)
    yield from _table_pages(catalog)
    for script in catalog.scripts:
        trail: Crumbs = [
            ("DAGs", paths.DAGS),
            ("scripts", f"{paths.DAGS}#scripts"),
            (script.path, None),
        ]
        yield Page(
            paths.script_page(script.path), "script.html", script.path, trail, {"script": script}
        )


def _svg(svg: str) -> Markup:
    # etl_craft.drawing escapes every label, id and title it writes into the SVG.
    return Markup(svg)  # noqa: S704


def _pipeline_crumbs(code: str) -> Crumbs:
    return [("DAGs", paths.DAGS), (code, None)]


def _rule_pages(catalog: Catalog) -> Iterator[Page]:
    for rule in catalog.rules:
        pipeline, task = rule.task.split(".", 1)
        crumbs: Crumbs = [
            ("DAGs", paths.DAGS),
            (pipeline, paths.pipeline_page(pipeline)),
            (task, paths.task_page(rule.task)),
            (rule.code, None),
        ]
        yield Page(paths.rule_page(rule.name), "rule.html", rule.name, crumbs, {"rule": rule})


def _table_pages(catalog: Catalog) -> Iterator[Page]:
    index = LineageIndex.of(catalog.lineage)
    tables = {t.key: t for t in catalog.tables}
    for table in catalog.tables:
        path = paths.table_page(table.key)
        database = table.database or "default"
        crumbs: Crumbs = [
            ("Warehouse", paths.WAREHOUSE),
            (database, f"{paths.WAREHOUSE}#{paths.anchor(table.database)}"),
            (
                table.schema_name,
                f"{paths.WAREHOUSE}#{paths.anchor(table.database, table.schema_name)}",
            ),
            (table.table, None),
        ]
        graphs = [
            (depth, _svg(svg), count)
            for depth, svg, count in table_lineage(tables, index, table, path)
        ]
        yield Page(path, "table.html", table.key, crumbs, {"table": table, "graphs": graphs})


def _warehouse_tree(catalog: Catalog) -> dict[str | None, dict[str, list[str]]]:
    """database -> schema -> table keys, in name order (None: the warehouse's default)."""
    tree: dict[str | None, dict[str, list[str]]] = {}
    for table in sorted(catalog.tables, key=lambda t: (t.database or "", t.schema_name, t.table)):
        tree.setdefault(table.database, {}).setdefault(table.schema_name, []).append(table.key)
    return tree
