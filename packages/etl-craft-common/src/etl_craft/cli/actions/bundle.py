"""etl-craft bundle publish."""

from __future__ import annotations

import argparse

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.operations.bundles import BundleView, publish_bundle


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        view = publish_bundle(ctx, args.project)
    finally:
        ctx.close()
    emit(view, args.format, render(view))
    return 0


def render(view: BundleView) -> str:
    if not view.published:
        return (
            f"project {view.project}: bundle {view.bundle_id} already holds these "
            f"{view.files} file(s); runs go on pinning it"
        )
    return (
        f"project {view.project}: published bundle {view.bundle_id} ({view.files} file(s), "
        f"{view.uploaded} uploaded) to {view.store_url}; runs admitted from now on execute it"
    )
