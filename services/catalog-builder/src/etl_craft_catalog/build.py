"""`etl-craft catalog build`: the static site, built beside the served one and swapped in."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.cli.progress import step_progress
from etl_craft.core.errors import UsageError
from etl_craft.operations.catalog.snapshot import read_catalog
from etl_craft.operations.catalog.views import Catalog
from etl_craft.operations.context import OperationContext
from etl_craft.operations.lineage import UntracedTask
from etl_craft_catalog.options import STRICT_FAILURE
from etl_craft_catalog.releases import publish
from etl_craft_catalog.site import page_count, write_site

# The exit code of `etl-craft lineage --strict` when a SELECT could not be traced.


@dataclass(frozen=True)
class CatalogBuild:
    schema: ClassVar[str] = "etl-craft/catalog-build/1"
    project: str
    output: Path
    release: Path | None  # None: --strict refused to publish
    built_at: datetime
    pages: int
    pipelines: int
    tasks: int
    tables: int
    columns: int
    rules: int
    scripts: int
    untraced: tuple[UntracedTask, ...]


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        output = site_output(args.output, ctx)
        with_warehouse, strict = args.with_warehouse, args.strict
        catalog = read_catalog(ctx, with_warehouse=with_warehouse)
    finally:
        ctx.close()
    report = write_catalog(catalog, output, strict=strict, fmt=args.format)
    emit(report, args.format, render(report))
    return STRICT_FAILURE if report.release is None else 0


def site_output(given: Path | None, ctx: OperationContext) -> Path:
    if given is not None:
        return given.absolute()
    if ctx.connector is not None:
        return ctx.connector.docs_site.output
    raise UsageError(
        "catalog build found no project (craft-connector.yml) to take Docs_site.output from "
        "and no --output; give the site's folder with --output DIR, or run it inside a project"
    )


def build_site(ctx: OperationContext, output: Path) -> CatalogBuild:
    """Reads the project's catalog and publishes it at ``output`` (the service's rebuild)."""
    return write_catalog(read_catalog(ctx, with_warehouse=False), output, strict=False, fmt="json")


def write_catalog(catalog: Catalog, output: Path, *, strict: bool, fmt: str) -> CatalogBuild:
    release = None
    if not (strict and catalog.untraced):
        with step_progress(fmt, page_count(catalog), "writing pages") as step:
            release = publish(output, lambda folder: write_site(catalog, folder, step))
    return _report(catalog, output, release)


def _report(catalog: Catalog, output: Path, release: Path | None) -> CatalogBuild:
    return CatalogBuild(
        project=catalog.project,
        output=output,
        release=release,
        built_at=catalog.built_at,
        pages=page_count(catalog),
        pipelines=len(catalog.pipelines),
        tasks=len(catalog.tasks),
        tables=len(catalog.tables),
        columns=sum(len(t.columns) for t in catalog.tables),
        rules=len(catalog.rules),
        scripts=len(catalog.scripts),
        untraced=catalog.untraced,
    )


def render(report: CatalogBuild) -> str:
    if report.release is None:
        lines = [
            f"catalog of project {report.project} not published: --strict and "
            f"{len(report.untraced)} SELECT(s) without column lineage"
        ]
    else:
        lines = [
            f"catalog of project {report.project} built in {report.output}: {report.pages} pages "
            f"({report.pipelines} pipelines, {report.tasks} tasks, {report.tables} tables with "
            f"{report.columns} columns, {report.rules} rules, {report.scripts} scripts)"
        ]
    lines += [
        f"  no column lineage: {t.pipeline_code}.{t.task_code}"
        + (f" (writes {t.target})" if t.target else "")
        + f": {t.reason}"
        for t in report.untraced
    ]
    return "\n".join(lines)
