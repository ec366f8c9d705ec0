"""The built-in commands of etl-craft: names, help and options, light to import; what each does
is in cli/actions, imported when the command runs."""

from __future__ import annotations

from etl_craft.cli.commands import bundle as bundle_command
from etl_craft.cli.commands import clone as clone_command
from etl_craft.cli.commands import (
    control,
    demo,
    doctor,
    explain,
    generate_yml,
    graph,
    init_db,
    lineage,
    logs,
    migrate,
    new,
    plan,
    preview,
    run,
    setup,
    steps,
    validate,
)
from etl_craft.cli.commands import list as list_command
from etl_craft.cli.commands import purge as purge_command
from etl_craft.cli.commands import rehash as rehash_command
from etl_craft.cli.commands import restore as restore_command
from etl_craft.cli.registry import Command

BUILT_IN: list[Command] = [
    init_db.COMMAND,
    migrate.COMMAND,
    plan.COMMAND,
    doctor.COMMAND,
    setup.COMMAND,
    new.COMMAND,
    demo.COMMAND,
    validate.COMMAND,
    generate_yml.COMMAND,
    list_command.COMMAND,
    graph.COMMAND,
    lineage.COMMAND,
    steps.COMMAND,
    control.RUN,
    control.RERUN,
    control.BACKFILL,
    run.STATUS,
    explain.COMMAND,
    preview.COMMAND,
    logs.COMMAND,
    run.HISTORY,
    run.RECONCILE,
    control.MARK,
    control.CANCEL,
    control.PAUSE,
    control.RESUME,
    control.REOPEN,
    control.AUDIT,
    rehash_command.COMMAND,
    restore_command.COMMAND,
    purge_command.COMMAND,
    bundle_command.COMMAND,
    clone_command.COMMAND,
]
