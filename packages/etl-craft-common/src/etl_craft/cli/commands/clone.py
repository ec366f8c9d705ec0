"""etl-craft clone: copy what changed in the AUD_ tables into the warehouse mirror."""

from __future__ import annotations

from etl_craft.cli.registry import Command

COMMAND = Command(
    name="clone",
    help="mirror the AUD_ tables into the warehouse schema of the Cloning section, "
    "copying only what changed since the last clone",
    configure=None,
    handler="etl_craft.cli.actions.clone:handle",
)
