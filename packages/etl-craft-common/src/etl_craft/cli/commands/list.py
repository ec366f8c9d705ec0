"""etl-craft list: the project's active pipelines with schedule, next run, last run and pause."""

from __future__ import annotations

from etl_craft.cli.registry import Command

COMMAND = Command(
    name="list",
    help="list the pipelines with their schedule, next run, last run and pause state",
    configure=None,
    handler="etl_craft.cli.actions.list:handle",
)
