"""etl-craft doctor: every check of the installation, each reported; exit 1 on any FAIL."""

from __future__ import annotations

from etl_craft.cli.registry import Command

COMMAND = Command(
    name="doctor",
    help="check the configuration, the Engine DB, its schema, guards and access, and that the "
    "warehouse and the SMTP relay answer",
    configure=None,
    handler="etl_craft.cli.actions.doctor:handle",
)
