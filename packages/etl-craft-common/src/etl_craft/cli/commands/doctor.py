"""etl-craft doctor: every check of the installation, each reported; exit 1 on any FAIL."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--worker",
        action="store_true",
        help="also check what a worker host needs: every import of the latest bundle's "
        "scripts resolves in this interpreter",
    )


COMMAND = Command(
    name="doctor",
    help="check the configuration, the Engine DB, its schema, guards and access, and that the "
    "warehouse and the SMTP relay answer",
    configure=configure,
    handler="etl_craft.cli.actions.doctor:handle",
)
