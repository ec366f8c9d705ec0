"""etl-craft mark, cancel, pause, resume, reopen and audit; run --rerun, --skip, --force,
--ignore-dependencies and --backfill."""

from __future__ import annotations

import argparse
from datetime import date

from etl_craft.cli.commands import run as run_command
from etl_craft.cli.registry import Command
from etl_craft.core import ranges
from etl_craft.runtime.starter import start_fork_server

STATUSES = ("SUCCESS", "FAILED", "SKIPPED")


def _pipeline(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    parser.add_argument(
        "--pipeline_code", "--pipeline-code", dest="pipeline_code", required=required
    )


def _run_id(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    parser.add_argument(
        "--run-id", type=ranges.ID.argument(), required=required, help="the run to act on, by id"
    )


def _reason(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reason", help="why: recorded with the intervention and its actor")


def _task(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task_code", "--task-code", dest="task_code")


def configure_mark(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    _run_id(parser)
    _task(parser)
    parser.add_argument("--status", required=True, choices=STATUSES)
    parser.add_argument(
        "--rows", type=ranges.ROWS_WRITTEN.argument(), help="rows written, recorded on the task run"
    )
    _reason(parser)


def configure_cancel(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    _run_id(parser)
    _reason(parser)


def configure_reopen(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    _run_id(parser, required=True)
    _reason(parser)


def configure_pause(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group(required=True)
    scope.add_argument("--pipeline_code", "--pipeline-code", dest="pipeline_code")
    scope.add_argument("--project", action="store_true", help="every pipeline of the project")
    _reason(parser)


def configure_audit(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser, required=False)
    parser.add_argument("--since", type=date.fromisoformat, help="YYYY-MM-DD (UTC)")
    parser.add_argument(
        "--limit",
        type=ranges.ROW_LIMIT.argument(),
        default=500,
        help="the newest rows of each kind, listed oldest first",
    )


def configure_run(parser: argparse.ArgumentParser) -> None:
    run_command.configure_run(parser)
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--rerun", action="store_true", help="run a recorded task again")
    what.add_argument("--skip", action="store_true", help="record a task as SKIPPED")
    what.add_argument(
        "--force", action="store_true", help="run one task now, whatever its dependencies say"
    )
    what.add_argument(
        "--ignore-dependencies",
        action="store_true",
        help="run every task after its upstreams, whatever they ended as",
    )
    what.add_argument(
        "--init-only",
        action="store_true",
        help="remote mode: create, admit or reopen the orchestrator's run (--run-key); no gate",
    )
    what.add_argument(
        "--finalize-only",
        action="store_true",
        help="remote mode: record the orchestrator's decisions and end its run (--run-key)",
    )
    what.add_argument(
        "--backfill",
        metavar="FROM:TO",
        help="one BACKFILL run per date, YYYY-MM-DD:YYYY-MM-DD, each to its end in turn",
    )
    parser.add_argument(
        "--with-downstream",
        action="store_true",
        help="with --rerun: also rerun every downstream task that ran",
    )
    parser.add_argument(
        "--plan",
        action="store_true",
        help="with --rerun or --backfill: show which task runs would run and which tables and "
        "columns they would change, doing nothing",
    )
    _reason(parser)


def prepare_run(args: argparse.Namespace) -> None:
    """Start the fork server of the run's task processes while this process imports what the
    run needs and admits it; none for the options that start no task."""
    if not (args.init_only or args.finalize_only or args.skip or args.plan):
        start_fork_server()


RUN = Command(
    "run",
    "run a pipeline in the foreground until its run ends; --rerun, --skip or --force one "
    "task; --ignore-dependencies; --backfill FROM:TO",
    configure_run,
    "etl_craft.cli.actions.control:handle_run",
    prepare_run,
)


MARK = Command(
    "mark",
    "set a task's or a run's status, with a reason",
    configure_mark,
    "etl_craft.cli.actions.control:handle_mark",
)


CANCEL = Command(
    "cancel",
    "cancel a run: queued tasks at once, running ones by their owner",
    configure_cancel,
    "etl_craft.cli.actions.control:handle_cancel",
)


PAUSE = Command(
    "pause",
    "stop new task starts of a pipeline or project",
    configure_pause,
    "etl_craft.cli.actions.control:handle_pause",
)


RESUME = Command(
    "resume", "lift a pause", configure_pause, "etl_craft.cli.actions.control:handle_resume"
)


REOPEN = Command(
    "reopen",
    "reopen an ended run so etl-craft run continues it",
    configure_reopen,
    "etl_craft.cli.actions.control:handle_reopen",
)


AUDIT = Command(
    "audit",
    "list recorded commands and metadata changes",
    configure_audit,
    "etl_craft.cli.actions.control:handle_audit",
)
