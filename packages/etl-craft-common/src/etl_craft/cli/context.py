"""From the global command-line options to what operations act with."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from etl_craft.operations.context import ContextRequest, OperationContext, build_context

log = logging.getLogger(__name__)


def context_request(args: argparse.Namespace, slots: int | None = None) -> ContextRequest:
    config = Path(args.config) if args.config else None
    return ContextRequest(config=config, profile=args.profile, cwd=Path.cwd(), slots=slots)


def operation_context(args: argparse.Namespace, slots: int | None = None) -> OperationContext:
    """What a command acts with; ``slots``: a worker's, which size its Engine DB pool."""
    ctx = build_context(context_request(args, slots))
    for problem in ctx.connector.missing_secrets if ctx.connector else ():
        log.warning("%s; commands that need it fail until it is set, others go on", problem)
    return ctx
