"""The built-in commands of etl-craft."""

from __future__ import annotations

from etl_craft.cli.commands import doctor, init_db, migrate
from etl_craft.cli.registry import Command

BUILT_IN: list[Command] = [init_db.COMMAND, migrate.COMMAND, doctor.COMMAND]
