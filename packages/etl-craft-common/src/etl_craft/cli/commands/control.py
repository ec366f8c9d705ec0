"""etl-craft mark, cancel, pause, resume, reopen, audit, rerun and backfill; run --skip,
--force and --ignore-dependencies."""

from __future__ import annotations

import argparse

from etl_craft.cli import vocabulary
from etl_craft.cli.commands import run as run_command
from etl_craft.cli.registry import Command
from etl_craft.core import ranges

STATUSES = ("SUCCESS", "FAILED", "SKIPPED")
CURRENT_PROJECT = ""  # `pause --project` with no value: the project the command acts on


def _pipeline(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    vocabulary.pipeline(parser, required=required)


def _run_id(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    vocabulary.run(parser, required=required, help="the run to act on, by id")


def _reason(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reason", help="why: recorded with the intervention and its actor")


def configure_mark(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    _run_id(parser)
    vocabulary.task(parser, help="the task to mark (default: the run itself)")
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
    vocabulary.pipeline(scope, required=False)
    # `pause --project` pauses the whole project the command acts on (the global --project,
    # else Orchestration.project); `pause --project P` names that project here instead.
    scope.add_argument(
        "--project",
        dest="whole_project",
        metavar="P",
        nargs="?",
        const=CURRENT_PROJECT,
        help="every pipeline of the project: the one acted on, or P",
    )
    _reason(parser)


def configure_audit(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser, required=False)
    parser.add_argument("--since", type=vocabulary.iso_date, help="YYYY-MM-DD (UTC)")
    parser.add_argument(
        "--limit",
        type=ranges.ROW_LIMIT.argument(),
        default=500,
        help="the newest rows of each kind, listed oldest first",
    )


def configure_run(parser: argparse.ArgumentParser) -> None:
    run_command.configure_run(parser)
    what = parser.add_mutually_exclusive_group()
    vocabulary.replaced(what, "--rerun", action="store_true")
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
    vocabulary.replaced(what, "--backfill", metavar="FROM:TO")
    _with_downstream(parser, help=argparse.SUPPRESS)
    _plan(parser, help=argparse.SUPPRESS)
    _reason(parser)


def _with_downstream(parser: argparse.ArgumentParser, *, help: str) -> None:
    parser.add_argument("--with-downstream", action="store_true", help=help)


def _plan(parser: argparse.ArgumentParser, *, help: str) -> None:
    parser.add_argument("--plan", action="store_true", help=help)


# What `run` reads from its options, for the commands that reuse its handler.
_RUN_DEFAULTS: dict[str, object] = {
    "rerun": False,
    "skip": False,
    "force": False,
    "ignore_dependencies": False,
    "init_only": False,
    "finalize_only": False,
    "backfill": None,
    "with_downstream": False,
    "plan": False,
    "run_key": None,
    "run_date": None,
    "run_id": None,
    "task_codes": [],
}


def configure_rerun(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    vocabulary.task(parser, required=True, help="the task to run again")
    _run_id(parser)
    _with_downstream(parser, help="also rerun every downstream task that ran")
    _plan(
        parser,
        help="show which task runs would run and which tables and columns they would change, "
        "doing nothing",
    )
    _reason(parser)
    parser.set_defaults(**{**_RUN_DEFAULTS, "rerun": True})


def configure_backfill(parser: argparse.ArgumentParser) -> None:
    _pipeline(parser)
    parser.add_argument(
        "--from",
        dest="date_from",
        type=vocabulary.iso_date,
        required=True,
        metavar="YYYY-MM-DD",
        help="the first run date",
    )
    parser.add_argument(
        "--to",
        dest="date_to",
        type=vocabulary.iso_date,
        required=True,
        metavar="YYYY-MM-DD",
        help="the last run date, included",
    )
    _plan(
        parser,
        help="show which runs would be made and which tables and columns they would change, "
        "doing nothing",
    )
    _reason(parser)
    parser.set_defaults(**_RUN_DEFAULTS)


def prepare_run(args: argparse.Namespace) -> None:
    """Start the fork server of the run's task processes while this process imports what the
    run needs and admits it; none for the options that start no task."""
    if not (args.init_only or args.finalize_only or args.skip or args.plan):
        # Imported here, not with the declarations every command's parser imports: the
        # starter's subprocess machinery is a running command's, never a reading one's.
        from etl_craft.runtime.starter import start_fork_server  # noqa: PLC0415

        start_fork_server()


RUN = Command(
    "run",
    "run a pipeline in the foreground until its run ends; --skip or --force one task; "
    "--ignore-dependencies",
    configure_run,
    "etl_craft.cli.actions.control:handle_run",
    prepare_run,
)


RERUN = Command(
    "rerun",
    "run a recorded task again (--with-downstream: and what ran after it); --plan shows it",
    configure_rerun,
    "etl_craft.cli.actions.control:handle_rerun",
    prepare_run,
)


BACKFILL = Command(
    "backfill",
    "one BACKFILL run per date from --from to --to, each to its end in turn; --plan shows it",
    configure_backfill,
    "etl_craft.cli.actions.control:handle_backfill",
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
