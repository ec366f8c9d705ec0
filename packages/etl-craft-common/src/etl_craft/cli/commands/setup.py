"""etl-craft setup --print-grants: the GRANTs for etl-craft's writer and read-only roles."""

from __future__ import annotations

import argparse

from etl_craft.cli.registry import Command
from etl_craft.core.defaults import READER_ROLE


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--print-grants",
        action="store_true",
        help="print the statements that create the writer and reader roles and grant them "
        "access; run them as the tables' owner or a superuser",
    )
    parser.add_argument(
        "--writer-role",
        help="the role whose members may write (default: Engine.writer_role of the "
        "configuration, else etl_craft_writer)",
    )
    parser.add_argument(
        "--reader-role",
        default=READER_ROLE,
        help="the read-only role (default: %(default)s)",
    )
    parser.add_argument(
        "--writer-login",
        action="append",
        default=[],
        metavar="LOGIN",
        help="a login etl-craft's services connect as, made a writer role member; repeatable",
    )
    parser.add_argument(
        "--worker-login",
        action="append",
        default=[],
        metavar="LOGIN=POOL",
        help="a worker's login, made a writer that the Engine DB lets claim only POOL's "
        "attempts; repeatable",
    )
    parser.add_argument(
        "--reader-login",
        action="append",
        default=[],
        metavar="LOGIN",
        help="a login that only reads, made a member of the reader role; repeatable",
    )


COMMAND = Command(
    name="setup",
    help="print the PostgreSQL GRANTs for etl-craft's writer and read-only roles",
    configure=configure,
    handler="etl_craft.cli.actions.setup:handle",
)
