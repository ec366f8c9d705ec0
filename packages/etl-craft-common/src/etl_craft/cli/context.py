"""From the global command-line options to what operations act with."""

from __future__ import annotations

import argparse
from pathlib import Path

from etl_craft.operations.context import ContextRequest, OperationContext, build_context


def context_request(args: argparse.Namespace) -> ContextRequest:
    config = Path(args.config) if args.config else None
    return ContextRequest(config=config, profile=args.profile, cwd=Path.cwd())


def operation_context(args: argparse.Namespace) -> OperationContext:
    return build_context(context_request(args))
