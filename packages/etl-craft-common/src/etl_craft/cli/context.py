"""From the global command-line options to what operations act with."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from etl_craft.config.settings import artifacts_store, load_settings
from etl_craft.core.errors import UsageError
from etl_craft.operations.context import ContextRequest, OperationContext, build_context
from etl_craft.operations.projects import require_project

log = logging.getLogger(__name__)

# Commands that may name a project the Engine DB does not hold yet: they create it, or
# report on the setup without needing it.
MAY_CREATE_PROJECT = frozenset({"init-db", "migrate", "setup", "new", "demo", "doctor", "plan"})
# Commands that apply the folder's own files or use its warehouse: only as the folder's project.
FOLDER_BOUND = frozenset({"init-db", "migrate", "setup", "plan", "preview", "clone"})
# Commands that run tasks here: another project's tasks need its bundle, not this folder.
RUNS_TASKS = frozenset({"run", "rerun", "backfill"})


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
    try:
        _check_project(ctx, getattr(args, "command", None))
    except BaseException:
        ctx.close()
        raise
    return ctx


def _check_project(ctx: OperationContext, command: str | None) -> None:
    if ctx.chosen_project is None:
        return
    if command not in MAY_CREATE_PROJECT:
        require_project(ctx)
    if ctx.acts_on_own_project or ctx.connector is None:
        return
    own = ctx.connector.orchestration.project
    if command in FOLDER_BOUND:
        raise UsageError(
            f"--project {ctx.chosen_project}: {command} uses the files and warehouse of "
            f"{ctx.connector.path}, whose project is {own}; run it with project "
            f"{ctx.chosen_project}'s craft-connector.yml (its folder, or --config)"
        )
    if command in RUNS_TASKS and artifacts_store(load_settings(), ctx.connector) is None:
        raise UsageError(
            f"--project {ctx.chosen_project}: this folder is project {own}'s, so its files "
            f"would run in place of project {ctx.chosen_project}'s; set Artifacts.store (or "
            "ETL_CRAFT_ARTIFACTS_STORE) so that runs execute each project's published bundle, "
            f"or run from project {ctx.chosen_project}'s folder"
        )
