"""What the catalog-builder service rebuilds: the one place the site build is wired in."""

from __future__ import annotations

from pathlib import Path

from etl_craft.operations.context import OperationContext
from etl_craft_catalog.build import build_site
from etl_craft_catalog.service import Rebuild


def site_rebuild(ctx: OperationContext, output: Path) -> Rebuild:
    """A rebuild of the site at ``output`` from the project's Engine DB.

    It must publish through etl_craft_catalog.releases.publish, so that a failing build leaves
    the served release in place.
    """

    def rebuild() -> None:
        build_site(ctx, output)

    return rebuild
