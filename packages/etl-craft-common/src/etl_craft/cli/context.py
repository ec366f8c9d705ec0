"""From the global command-line options to what operations act with."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from etl_craft.operations.context import ContextRequest, OperationContext, build_context
from etl_craft.operations.projects import require_project

log = logging.getLogger(__name__)

# Commands that may name a project the Engine DB does not hold yet: they create it, or
# report on the setup without needing it.
MAY_CREATE_PROJECT = frozenset({"init-db", "migrate", "setup", "new", "demo", "doctor", "plan"})


def context_request(args: argparse.Namespace, slots: int | None = None) -> ContextRequest:
    config = Path(args.config) if args.config else None
    return ContextRequest(
        config=config,
        profile=args.profile,
        cwd=Path.cwd(),
        slots=slots,
        project=getattr(args, "project", None),
    )


def operation_context(args: argparse.Namespace, slots: int | None = None) -> OperationContext:
    """What a command acts with; ``slots``: a worker's, which size its Engine DB pool."""
    ctx = build_context(context_request(args, slots))
    for problem in ctx.connector.missing_secrets if ctx.connector else ():
        log.warning("%s; commands that need it fail until it is set, others go on", problem)
    if ctx.chosen_project is not None and getattr(args, "command", None) not in MAY_CREATE_PROJECT:
        try:
            require_project(ctx)
        except BaseException:
            ctx.close()
            raise
    return ctx
