"""etl-craft init-db: create the Engine DB schema, or bring an existing one up to date."""

from __future__ import annotations

from etl_craft.cli.registry import Command

COMMAND = Command(
    name="init-db",
    help="create the Engine DB schema, or bring an existing one up to date",
    configure=None,
    handler="etl_craft.cli.actions.init_db:handle",
)
