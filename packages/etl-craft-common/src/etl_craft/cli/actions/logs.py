"""etl-craft logs: print an attempt's log, or follow it while the attempt runs."""

from __future__ import annotations

import argparse
import json
import sys

from etl_craft.cli.context import operation_context
from etl_craft.cli.output import emit
from etl_craft.core.errors import UsageError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.logs.attempts import AttemptView, latest_attempt
from etl_craft.operations.logs.lines import follow_log, whole_log
from etl_craft.operations.masking import secrets_redactor
from etl_craft.operations.serialize import to_json


def handle(args: argparse.Namespace) -> int:
    ctx = operation_context(args)
    try:
        attempt_id = _attempt_id(ctx, args)
        redactor = secrets_redactor(ctx)
        if not args.follow:
            found = whole_log(ctx, attempt_id, redactor)
            if args.format != "json":
                sys.stderr.write(_heading(found.attempt, found.path))
            emit(found, args.format, "\n".join(found.lines))
            return 0
        if args.format == "json":
            ended = follow_log(ctx, attempt_id, redactor, _LineWriter(attempt_id))
            _write_json(to_json(ended))
        else:
            ended = follow_log(ctx, attempt_id, redactor, _text)
            sys.stderr.write(f"attempt {ended.attempt_id} ended {ended.status}\n")
    finally:
        ctx.close()
    return 0


def _attempt_id(ctx: OperationContext, args: argparse.Namespace) -> int:
    if args.attempt is not None and args.run_id is None and args.task_code is None:
        return int(args.attempt)
    if args.attempt is None and args.run_id is not None and args.task_code is not None:
        return latest_attempt(ctx, args.run_id, args.task_code)
    raise UsageError(
        "etl-craft logs needs either --attempt N, or --run R with --task T (its newest "
        "attempt); etl-craft status --run R lists a run's tasks"
    )


def _text(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


class _LineWriter:
    """--follow --format json: one JSON object per log line, as it is written."""

    def __init__(self, attempt_id: int) -> None:
        self.attempt_id = attempt_id

    def __call__(self, text: str) -> None:
        for line in text.splitlines():
            _write_json({"attempt_id": self.attempt_id, "line": line})


def _write_json(document: object) -> None:
    sys.stdout.write(json.dumps(document) + "\n")
    sys.stdout.flush()


def _heading(view: AttemptView, path: str) -> str:
    return (
        f"attempt {view.attempt_id} of {view.pipeline_code}.{view.task_code} (run {view.run_id}, "
        f"attempt {view.attempt_number}, {view.status}): {path}\n"
    )
